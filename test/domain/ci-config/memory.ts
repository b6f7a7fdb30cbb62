/**
 * The CI configuration loader and job selection driven from memory (issue 27, item 5): the files
 * of the pipeline's commit, other projects, remote hosts and templates are plain objects handed
 * to the loader through its IncludeSources port, and the pipeline it is selected for is a plain
 * SelectContext. No app, no database, no git: a case costs well under a millisecond.
 */
import type { PipelineConfig } from '../../../src/domain/ci-config/ci-config.ts';
import { ConfigError } from '../../../src/domain/ci-config/config-error.ts';
import type { IncludeSources, ProjectFile } from '../../../src/domain/ci-config/includes.ts';
import { releasedVersion, type ComponentFile } from '../../../src/domain/ci-config/components.ts';
import { loadCiConfig, selectJobs, type LoadedConfig } from '../../../src/domain/ci-config/parse-ci-config.ts';
import type { SelectContext } from '../../../src/domain/ci-config/select.ts';

/** Path → content. */
export type Files = Record<string, string>;

/** Another project the pipeline's user can read: its files at each ref. */
export interface MemoryProject {
  defaultBranch?: string | null;
  refs: Record<string, Files>;
}

/**
 * What a remote URL answers: a body (200), a status with a body, or a failure of the request:
 * `timeout`, `socket` (refused, reset), `broken` (the body fails half-way), or `{ bytes }` of body.
 */
export type RemoteAnswer = string | { status: number; body?: string } | { bytes: number } | 'timeout' | 'socket' | 'broken';

export interface World {
  /** The pipeline's own commit. */
  files?: Files;
  /** Other projects by full path (component projects too: their refs are branches, tags and SHAs alike). */
  projects?: Record<string, MemoryProject>;
  /** The released tags of each project, for components' `~latest` and `1.2`. */
  releases?: Record<string, string[]>;
  /** Remote URLs; a URL not listed answers 404. */
  remote?: Record<string, RemoteAnswer>;
  /** Hosts remote includes may be fetched from (KILN_CI_REMOTE_INCLUDE_HOSTS). */
  remoteHosts?: string[];
  /** Template files by name; null or absent: none. */
  templates?: Files | null;
  /** No project stands behind the configuration (instance-level lint). */
  projectless?: boolean;
}

/** The pipeline the configuration is selected for. */
export interface Pipeline {
  ref?: string;
  tag?: boolean;
  source?: string;
  /** The caller's variables (settings, pipeline, trigger variables). */
  variables?: Record<string, string>;
  /** Paths a push changed; null (the default): nothing to compare with. */
  changed?: string[] | null;
  /** `changes:compare_to` refs and the paths that differ from each. */
  comparedTo?: Record<string, string[]>;
  projectFullPath?: string;
}

/** What the remote hosts were asked, with the options of each request. */
export interface FetchLog {
  url: string;
  redirect: RequestInit['redirect'];
  timed: boolean;
}

function sorted(files: Files): string[] {
  return Object.keys(files).sort();
}

function answer(a: RemoteAnswer | undefined): Response {
  if (a === undefined) return new Response('not found', { status: 404 });
  if (a === 'timeout') throw new DOMException('The operation was aborted due to timeout', 'TimeoutError');
  if (a === 'socket') throw new TypeError('fetch failed');
  if (a === 'broken') {
    let sent = false;
    return new Response(new ReadableStream({
      pull(controller) {
        if (sent) { controller.error(new Error('other side closed')); return; }
        sent = true;
        controller.enqueue(new TextEncoder().encode('job:\n'));
      },
    }));
  }
  if (typeof a === 'string') return new Response(a);
  if ('bytes' in a) return new Response(`# ${'x'.repeat(a.bytes)}\n`);
  return new Response(a.body ?? null, { status: a.status });
}

/** The host component addresses of the in-memory kiln start with (its CI_SERVER_FQDN). */
export const MEMORY_FQDN = 'kiln.example:8443';

export function memorySources(world: World, log: FetchLog[] = []): IncludeSources {
  const files = world.files ?? {};
  const templates = world.templates ?? null;
  return {
    ...(world.projectless ? { projectless: true } : {}),
    readLocal: async (p) => files[p] ?? null,
    listLocal: async () => sorted(files),
    async readProject(fullPath, ref, file): Promise<ProjectFile> {
      const project = world.projects?.[fullPath];
      if (!project) return { error: 'project' };
      const at = ref ?? project.defaultBranch ?? undefined;
      const tree = at === undefined ? undefined : project.refs[at];
      if (!tree) return { error: 'ref' };
      const content = tree[file];
      if (content === undefined) return { error: 'file' };
      return { content, local: { readLocal: async (p) => tree[p] ?? null, listLocal: async () => sorted(tree) } };
    },
    serverFqdn: MEMORY_FQDN,
    async readComponent(projectPath, version, name): Promise<ComponentFile> {
      const project = world.projects?.[projectPath];
      if (!project) return { error: 'project' };
      const tree = project.refs[releasedVersion(version, world.releases?.[projectPath] ?? []) ?? version];
      if (!tree) return { error: 'content' };
      const content = tree[`templates/${name}.yml`] ?? tree[`templates/${name}/template.yml`];
      if (content === undefined) return { error: 'content' };
      return { content, local: { readLocal: async (p) => tree[p] ?? null, listLocal: async () => sorted(tree) } };
    },
    remoteHosts: world.remoteHosts ?? [],
    readTemplate: async (name) => templates?.[name] ?? null,
    fetch: async (input, init) => {
      const url = input instanceof URL ? input.href : String(input);
      log.push({ url, redirect: init?.redirect, timed: init?.signal instanceof AbortSignal });
      return answer(world.remote?.[url]);
    },
  };
}

/** The predefined variables of a pipeline at `ref` (the ones rules read most), the caller's winning. */
export function predefinedFor(p: Pipeline): Map<string, string> {
  const ref = p.ref ?? 'main';
  const vars = new Map<string, string>([
    ['CI', 'true'],
    ['CI_DEFAULT_BRANCH', 'main'],
    ['CI_SERVER_FQDN', MEMORY_FQDN],
    ['CI_SERVER_HOST', 'kiln.example'],
    ['CI_PROJECT_PATH', p.projectFullPath ?? 'group/project'],
    ['CI_PIPELINE_SOURCE', p.source ?? 'push'],
    ['CI_COMMIT_REF_NAME', ref],
    [p.tag ? 'CI_COMMIT_TAG' : 'CI_COMMIT_BRANCH', ref],
  ]);
  for (const [k, v] of Object.entries(p.variables ?? {})) vars.set(k, v);
  return vars;
}

export function selectContextFor(world: World, p: Pipeline): SelectContext {
  const tree = sorted(world.files ?? {});
  return {
    predefined: predefinedFor(p),
    callerVariables: Object.entries(p.variables ?? {}).map(([key, value]) => ({ key, value })),
    source: p.source ?? 'push',
    ref: p.ref ?? 'main',
    tag: p.tag ?? false,
    projectFullPath: p.projectFullPath ?? 'group/project',
    changedPaths: async (compareTo) => (compareTo === undefined ? p.changed ?? null : p.comparedTo?.[compareTo] ?? null),
    treePaths: async () => tree,
  };
}

/** loadCiConfig over memory, as CI lint runs it. */
export function load(yaml: string, world: World = {}, p: Pipeline = {}, log?: FetchLog[]): Promise<LoadedConfig> {
  // include:rules:changes compares as the pipeline's rules do (create-pipeline-rows.ts).
  return loadCiConfig(yaml, { ...memorySources(world, log), changedPaths: selectContextFor(world, p).changedPaths }, predefinedFor(p));
}

/** loadCiConfig then selectJobs, as pipeline creation runs them. */
export async function pipeline(yaml: string, world: World = {}, p: Pipeline = {}): Promise<PipelineConfig> {
  return selectJobs(await load(yaml, world, p), selectContextFor(world, p));
}

/** The ConfigError message the promise fails with; fails itself if it succeeds or throws anything else. */
export async function errorOf(work: Promise<unknown>): Promise<string> {
  try {
    await work;
  } catch (err) {
    if (err instanceof ConfigError) return err.message;
    throw err;
  }
  throw new Error('expected a ConfigError, got a configuration');
}
