/**
 * File templates kiln ships (the Service's lib/gitlab/template/*: GitignoreTemplate,
 * DockerfileTemplate, GitlabCiYmlTemplate): `.gitignore` files, Dockerfiles and CI
 * configurations written for kiln, under `builtin/` beside this file. A template's key and name are
 * its file name without the type's extension (BaseTemplate#name, aliased as #key); the CI
 * templates sit in categories (General at the top, Pages in `Pages/`) and are listed category by
 * category, each sorted by name (BaseTemplate.all, by_category).
 *
 * The files are read once, on first use, into memory: a request names a template only as a key
 * to look up, never as a path.
 *
 * `include:template` reads the CI templates too (External::File::Template finds
 * `<key>.gitlab-ci.yml` the same way); an administrator's KILN_CI_TEMPLATES_DIR may hold files of
 * the same names, which win over the built-in ones (src/domain/pipelines/pipeline-context.ts).
 */
import fs from 'node:fs';
import path from 'node:path';

export type FileTemplateType = 'gitignores' | 'dockerfiles' | 'gitlab_ci_ymls';

export interface FileTemplate {
  key: string;
  name: string;
  /** Category directory ('' for the top). */
  category: string;
  /** Path under the type's directory, e.g. `Pages/Hugo.gitlab-ci.yml`. */
  file: string;
  content: string;
}

interface TypeLayout { dir: string; extension: string; categories: string[] }

const DATA_DIR = path.join(import.meta.dirname, 'builtin');

/** Directories and extensions of each type, and their categories in listing order. */
const LAYOUT: Record<FileTemplateType, TypeLayout> = {
  gitignores: { dir: 'gitignore', extension: '.gitignore', categories: [''] },
  dockerfiles: { dir: 'dockerfile', extension: '.Dockerfile', categories: [''] },
  gitlab_ci_ymls: { dir: 'ci', extension: '.gitlab-ci.yml', categories: ['', 'Pages'] },
};

export const CI_TEMPLATE_EXTENSION = LAYOUT.gitlab_ci_ymls.extension;

const loaded = new Map<FileTemplateType, FileTemplate[]>();

function load(type: FileTemplateType): FileTemplate[] {
  const cached = loaded.get(type);
  if (cached) return cached;
  const layout = LAYOUT[type];
  const out: FileTemplate[] = [];
  for (const category of layout.categories) {
    const dir = path.join(DATA_DIR, layout.dir, category);
    const names = fs.readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isFile() && e.name.endsWith(layout.extension))
      .map((e) => e.name.slice(0, -layout.extension.length))
      // Ruby's String#<=> orders by bytes, as Buffer.compare does.
      .sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
    for (const name of names) {
      const file = category === '' ? `${name}${layout.extension}` : `${category}/${name}${layout.extension}`;
      out.push({ key: name, name, category, file, content: fs.readFileSync(path.join(DATA_DIR, layout.dir, file), 'utf8') });
    }
  }
  loaded.set(type, out);
  return out;
}

/** Every template of a type, category by category, each sorted by name. */
export function listFileTemplates(type: FileTemplateType): FileTemplate[] {
  return load(type);
}

/**
 * One template by key (GlobalTemplateFinder#find: `<key><extension>` looked for in each category
 * directory in turn, so `Hugo` and `Pages/Hugo` both name the Pages template).
 */
export function findFileTemplate(type: FileTemplateType, key: string): FileTemplate | null {
  const all = load(type);
  const { extension, categories } = LAYOUT[type];
  for (const category of categories) {
    const file = category === '' ? `${key}${extension}` : `${category}/${key}${extension}`;
    const found = all.find((t) => t.file === file);
    if (found) return found;
  }
  return null;
}

/** The built-in CI template an `include:template` location names (`Bash.gitlab-ci.yml`), or null. */
export function builtinCiTemplate(location: string): string | null {
  if (!location.endsWith(CI_TEMPLATE_EXTENSION)) return null;
  return findFileTemplate('gitlab_ci_ymls', location.slice(0, -CI_TEMPLATE_EXTENSION.length))?.content ?? null;
}
