/**
 * A project's sidebar: Overview, Repository (Files, Commits, Branches, Tags), Issues (List,
 * Labels, Milestones), Merge requests, CI/CD (Pipelines, Jobs), Deployments (Environments,
 * Releases), Wiki, Snippets, Members, Settings. An entry is shown when its page exists (declared
 * with `web.project`, router.ts) and the viewer holds the ability the page itself demands, so the
 * sidebar never links to a page that would answer 404 or 403.
 */
import type { ProjectAction } from '../domain/permissions/project.policy.ts';
import { html, type SafeHtml } from './html.ts';

/** What the sidebar needs of a project page's project (router.ts WebProject). */
export interface NavProject {
  fullPath: string;
  project: { name: string; default_branch: string | null };
  can(action: ProjectAction): boolean;
}

interface Entry { segment: string; label: string; ability: ProjectAction; href: (base: string, ref: string) => string }
interface Section { label: string; entries: Entry[] }

const enc = (ref: string) => ref.split('/').map(encodeURIComponent).join('/');

const SECTIONS: Section[] = [
  { label: 'Overview', entries: [{ segment: '', label: 'Overview', ability: 'read_project', href: (b) => b }] },
  {
    label: 'Repository', entries: [
      { segment: 'tree', label: 'Files', ability: 'download_code', href: (b, ref) => `${b}/-/tree/${enc(ref)}` },
      { segment: 'commits', label: 'Commits', ability: 'download_code', href: (b, ref) => `${b}/-/commits/${enc(ref)}` },
      { segment: 'branches', label: 'Branches', ability: 'download_code', href: (b) => `${b}/-/branches` },
      { segment: 'tags', label: 'Tags', ability: 'download_code', href: (b) => `${b}/-/tags` },
    ],
  },
  {
    label: 'Issues', entries: [
      { segment: 'issues', label: 'List', ability: 'read_issue', href: (b) => `${b}/-/issues` },
      { segment: 'labels', label: 'Labels', ability: 'read_label', href: (b) => `${b}/-/labels` },
      { segment: 'milestones', label: 'Milestones', ability: 'read_milestone', href: (b) => `${b}/-/milestones` },
    ],
  },
  {
    label: 'Merge requests',
    entries: [{ segment: 'merge_requests', label: 'Merge requests', ability: 'read_merge_request', href: (b) => `${b}/-/merge_requests` }],
  },
  {
    label: 'CI/CD', entries: [
      { segment: 'pipelines', label: 'Pipelines', ability: 'read_build', href: (b) => `${b}/-/pipelines` },
      { segment: 'jobs', label: 'Jobs', ability: 'read_build', href: (b) => `${b}/-/jobs` },
    ],
  },
  {
    label: 'Deployments', entries: [
      { segment: 'environments', label: 'Environments', ability: 'read_environment', href: (b) => `${b}/-/environments` },
      { segment: 'releases', label: 'Releases', ability: 'read_release', href: (b) => `${b}/-/releases` },
    ],
  },
  { label: 'Wiki', entries: [{ segment: 'wikis', label: 'Wiki', ability: 'read_wiki', href: (b) => `${b}/-/wikis/home` }] },
  { label: 'Snippets', entries: [{ segment: 'snippets', label: 'Snippets', ability: 'read_snippet', href: (b) => `${b}/-/snippets` }] },
  {
    label: 'Members',
    entries: [{ segment: 'project_members', label: 'Members', ability: 'read_members', href: (b) => `${b}/-/project_members` }],
  },
  { label: 'Settings', entries: [{ segment: 'settings', label: 'Settings', ability: 'admin_project', href: (b) => `${b}/-/settings` }] },
];

/** The sidebar's section of a page segment, so that `blob` lights up Files, `commit` Commits … */
const ACTIVE_ALIASES: Record<string, string> = {
  blob: 'tree', raw: 'tree', blame: 'tree', commit: 'commits', pipeline: 'pipelines', job: 'jobs',
};

export function projectSidebar(project: NavProject, active: string, hasPage: (segment: string) => boolean): SafeHtml {
  const base = `/${enc(project.fullPath)}`;
  const ref = project.project.default_branch ?? 'main';
  const current = ACTIVE_ALIASES[active] ?? active;
  const link = (e: Entry) => html`<a href="${e.href(base, ref)}"${e.segment === current ? html` aria-current="page"` : ''}>${e.label}</a>`;
  const items = SECTIONS.map((s) => {
    const shown = s.entries.filter((e) => hasPage(e.segment) && project.can(e.ability));
    if (shown.length === 0) return '';
    if (shown.length === 1 && s.entries.length === 1) return html`<li>${link(shown[0]!)}</li>`;
    return html`<li><a href="${shown[0]!.href(base, ref)}">${s.label}</a><ul>${shown.map((e) => html`<li>${link(e)}</li>`)}</ul></li>`;
  });
  return html`<nav class="sidebar" aria-label="Project">
<a class="project-name" href="${base}">${project.project.name}</a>
<ul>${items}</ul>
</nav>`;
}
