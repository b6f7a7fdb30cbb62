/**
 * Links the references of a rendered text (references.ts) that the resolver answers, with the
 * markup of the Service's reference filters (lib/banzai/filter/references/): the `gfm gfm-<type>`
 * classes and `data-reference-type` that the Service's clients read. References in code, in
 * preformatted text and in existing links stay text.
 */
import { el, replaceWith, Text, textNodes, type ChildNode, type Element, type ParentNode } from './dom.ts';
import {
  findReferences, type AllMembersReference, type IssueReference, type LabelReference, type MergeRequestReference, type MilestoneReference,
  type ReferenceMatch,
  type ReferenceResolver, type UserReference,
} from './references.ts';

/** At most this many distinct references of one kind are looked up per text; later ones stay text. */
export const MAX_REFERENCES_PER_KIND = 500;

const SKIP = new Set(['pre', 'code', 'a', 'tt', 'gl-emoji', 'style']);

interface Resolved {
  users: Map<string, UserReference>;
  all: AllMembersReference | null;
  issues: Map<number, IssueReference>;
  mergeRequests: Map<number, MergeRequestReference>;
  labelsById: Map<number, LabelReference>;
  labelsByTitle: Map<string, LabelReference>;
  milestonesByIid: Map<number, MilestoneReference>;
  milestonesByTitle: Map<string, MilestoneReference>;
}

/** The first of `rows` for each key: the resolver answers in order of precedence. */
function firstBy<T, K>(rows: T[], key: (row: T) => K): Map<K, T> {
  const map = new Map<K, T>();
  for (const row of rows) if (!map.has(key(row))) map.set(key(row), row);
  return map;
}

function capped<T>(values: Iterable<T>): T[] {
  return [...new Set(values)].slice(0, MAX_REFERENCES_PER_KIND);
}

async function resolve(resolver: ReferenceResolver, matches: ReferenceMatch[]): Promise<Resolved> {
  const refs = matches.map((m) => m.ref);
  const usernames = capped(refs.flatMap((r) => (r.kind === 'user' ? [r.username.toLowerCase()] : [])));
  const iids = capped(refs.flatMap((r) => (r.kind === 'issue' ? [r.iid] : [])));
  const mrIids = capped(refs.flatMap((r) => (r.kind === 'merge_request' ? [r.iid] : [])));
  const labelIds = capped(refs.flatMap((r) => (r.kind === 'label' && 'id' in r ? [r.id] : [])));
  const labelTitles = capped(refs.flatMap((r) => (r.kind === 'label' && 'title' in r ? [r.title] : [])));
  const milestoneIids = capped(refs.flatMap((r) => (r.kind === 'milestone' && 'iid' in r ? [r.iid] : [])));
  const milestoneTitles = capped(refs.flatMap((r) => (r.kind === 'milestone' && 'title' in r ? [r.title] : [])));
  const [users, issues, labels, milestones, all, mergeRequests] = await Promise.all([
    usernames.length > 0 ? resolver.users(usernames) : [],
    iids.length > 0 ? resolver.issues(iids) : [],
    labelIds.length + labelTitles.length > 0 ? resolver.labels({ ids: labelIds, titles: labelTitles }) : [],
    milestoneIids.length + milestoneTitles.length > 0 ? resolver.milestones({ iids: milestoneIids, titles: milestoneTitles }) : [],
    refs.some((r) => r.kind === 'all') ? resolver.allMembers() : null,
    mrIids.length > 0 ? resolver.mergeRequests(mrIids) : [],
  ]);
  return {
    users: new Map(users.map((u) => [u.username.toLowerCase(), u])),
    issues: new Map(issues.map((i) => [i.iid, i])),
    mergeRequests: new Map(mergeRequests.map((m) => [m.iid, m])),
    labelsById: firstBy(labels, (l) => l.id),
    labelsByTitle: firstBy(labels, (l) => l.title),
    milestonesByIid: firstBy(milestones, (m) => m.iid),
    milestonesByTitle: firstBy(milestones, (m) => m.title),
    all,
  };
}

/** Attributes every object reference carries (AbstractReferenceFilter#object_link_filter). */
function common(type: string, original: string, projectId: number | null): Record<string, string> {
  const attribs: Record<string, string> = {
    'data-reference-type': type, 'data-original': original, 'data-link': 'false', 'data-link-reference': 'false',
  };
  if (projectId !== null) attribs['data-project'] = String(projectId);
  return attribs;
}

const tooltip = { 'data-container': 'body', 'data-placement': 'top' };

/** LabelsHelper#text_color_for_bg: dark text on light backgrounds. */
function lightText(color: string): boolean {
  const m = /^#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec(color);
  if (!m) return true;
  return parseInt(m[1], 16) + parseInt(m[2], 16) + parseInt(m[3], 16) <= 500;
}

function labelLink(label: LabelReference, original: string): Element {
  const color = /^#[0-9a-f]{3}(?:[0-9a-f]{3})?$/i.test(label.color) ? label.color : '#6699cc';
  const text = el('span', {
    class: `gl-label-text ${lightText(color) ? 'gl-label-text-light' : 'gl-label-text-dark'}`,
    'data-container': 'body', 'data-html': 'true', style: `background-color: ${color}`,
  }, [new Text(label.title)]);
  const link = el('a', {
    href: label.url, ...common('label', original, label.projectId), 'data-label': String(label.id), ...tooltip,
    title: label.description ?? '', class: 'gfm gfm-label has-tooltip gl-link gl-label-link',
  }, [text]);
  return el('span', { class: 'gl-label gl-label-sm' }, [link]);
}

function linkFor(match: ReferenceMatch, found: Resolved): ChildNode | null {
  const { ref, original } = match;
  switch (ref.kind) {
    case 'user': {
      const user = found.users.get(ref.username.toLowerCase());
      if (!user) return null;
      return el('a', {
        href: user.url, 'data-reference-type': 'user', 'data-user': String(user.id), ...tooltip,
        class: 'gfm gfm-project_member js-user-link', title: user.name,
      }, [new Text(original)]);
    }
    case 'all': {
      const all = found.all;
      if (!all) return null;
      return el('a', {
        href: all.url, 'data-reference-type': 'user', 'data-project': String(all.projectId),
        ...(all.authorId !== null ? { 'data-author': String(all.authorId) } : {}), ...tooltip,
        class: 'gfm gfm-project_member js-user-link', title: 'All Project and Group Members',
      }, [new Text(original)]);
    }
    case 'issue': {
      const issue = found.issues.get(ref.iid);
      if (!issue) return null;
      return el('a', {
        href: issue.url, ...common('issue', original, issue.projectId), 'data-issue': String(issue.id),
        'data-project-path': issue.projectPath, 'data-iid': String(issue.iid), 'data-issue-type': issue.issueType, ...tooltip,
        title: issue.title, class: 'gfm gfm-issue has-tooltip',
      }, [new Text(original)]);
    }
    case 'merge_request': {
      const mr = found.mergeRequests.get(ref.iid);
      if (!mr) return null;
      return el('a', {
        href: mr.url, ...common('merge_request', original, mr.projectId), 'data-merge-request': String(mr.id),
        'data-project-path': mr.projectPath, 'data-iid': String(mr.iid), ...tooltip,
        title: mr.title, class: 'gfm gfm-merge_request',
      }, [new Text(original)]);
    }
    case 'label': {
      const label = 'id' in ref ? found.labelsById.get(ref.id) : found.labelsByTitle.get(ref.title);
      return label ? labelLink(label, original) : null;
    }
    case 'milestone': {
      const milestone = 'iid' in ref ? found.milestonesByIid.get(ref.iid) : found.milestonesByTitle.get(ref.title);
      if (!milestone) return null;
      return el('a', {
        href: milestone.url, ...common('milestone', original, milestone.projectId), 'data-milestone': String(milestone.id),
        ...tooltip, title: '', class: 'gfm gfm-milestone has-tooltip',
      }, [new Text(`%${milestone.title}`)]);
    }
  }
}

export async function linkReferences(root: ParentNode, resolver: ReferenceResolver): Promise<void> {
  const pending: { node: Text; matches: ReferenceMatch[] }[] = [];
  for (const node of textNodes(root, SKIP)) {
    const matches = findReferences(node.data);
    if (matches.length > 0) pending.push({ node, matches });
  }
  if (pending.length === 0) return;
  const found = await resolve(resolver, pending.flatMap((p) => p.matches));
  for (const { node, matches } of pending) {
    const out: ChildNode[] = [];
    let last = 0;
    for (const match of matches) {
      const link = linkFor(match, found);
      if (!link) continue;
      if (match.index > last) out.push(new Text(node.data.slice(last, match.index)));
      out.push(link);
      last = match.index + match.original.length;
    }
    if (out.length === 0) continue;
    if (last < node.data.length) out.push(new Text(node.data.slice(last)));
    replaceWith(node, out);
  }
}
