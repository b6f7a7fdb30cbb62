/**
 * The Service's Entities::Release (15.2) and what it nests: Releases::Link, Releases::Source,
 * Releases::Evidence and MilestoneWithStats. What depends on the viewer follows the entity's
 * conditions: `tag_name`, `commit`, the commit and tag paths, the archive sources and the evidence
 * only for viewers who may download the code, `milestones` only when the release has some and the
 * viewer may read milestones, `edit_url` only for those who may update the release, and
 * `assets.count` counting the sources only where they are shown (ReleasePresenter#assets_count).
 */
import { Type, type Static } from 'typebox';
import type { ReleaseEvidenceRow, ReleaseLinkRow, ReleaseRow } from '../../db/tables/releases.ts';
import type { MilestoneRow } from '../../db/tables/labels.ts';
import { CommitSchema, type Commit } from './commit.ts';
import { MilestoneSchema, presentMilestone } from './milestone.ts';
import { UserBasicSchema, type UserBasic } from './user.ts';
import { exactJson } from './serializers.ts';

export const ReleaseLinkSchema = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  url: Type.String(),
  direct_asset_url: Type.String(),
  external: Type.Boolean(),
  link_type: Type.String(),
}, { title: 'ReleaseLink' });
export type ReleaseLink = Static<typeof ReleaseLinkSchema>;

const SourceSchema = Type.Object({ format: Type.String(), url: Type.String() }, { title: 'ReleaseSource' });
const EvidenceSchema = Type.Object(
  { sha: Type.String(), filepath: Type.String(), collected_at: Type.String() }, { title: 'ReleaseEvidence' },
);

const MilestoneWithStatsSchema = Type.Object({
  ...MilestoneSchema.properties,
  issue_stats: Type.Object({ total: Type.Integer(), closed: Type.Integer() }),
}, { title: 'MilestoneWithStats' });

const OptString = Type.Optional(Type.String());

export const ReleaseSchema = exactJson(Type.Object({
  name: Type.Union([Type.String(), Type.Null()]),
  tag_name: OptString,
  description: Type.Union([Type.String(), Type.Null()]),
  description_html: Type.Optional(Type.String()),
  created_at: Type.String(),
  released_at: Type.String(),
  author: Type.Optional(UserBasicSchema),
  commit: Type.Optional(Type.Union([CommitSchema, Type.Null()])),
  upcoming_release: Type.Boolean(),
  milestones: Type.Optional(Type.Array(MilestoneWithStatsSchema)),
  commit_path: OptString,
  tag_path: OptString,
  assets: Type.Object({
    count: Type.Integer(),
    sources: Type.Optional(Type.Array(SourceSchema)),
    links: Type.Array(ReleaseLinkSchema),
  }),
  evidences: Type.Optional(Type.Array(EvidenceSchema)),
  _links: Type.Object({
    self: Type.String(),
    opened_merge_requests_url: OptString,
    merged_merge_requests_url: OptString,
    closed_merge_requests_url: OptString,
    opened_issues_url: OptString,
    closed_issues_url: OptString,
    edit_url: OptString,
  }),
}, { title: 'Release' }));
export type Release = Static<typeof ReleaseSchema>;

/** The Service's BasicReleaseDetails (a group's releases with `simple`). */
export const BasicReleaseSchema = Type.Object({
  name: Type.Union([Type.String(), Type.Null()]),
  tag_name: Type.String(),
  description: Type.Union([Type.String(), Type.Null()]),
  created_at: Type.String(),
  released_at: Type.String(),
  upcoming_release: Type.Boolean(),
}, { title: 'BasicReleaseDetails' });

export function presentBasicRelease(r: ReleaseRow, now = Date.now()): Static<typeof BasicReleaseSchema> {
  return {
    name: r.name, tag_name: r.tag, description: r.description, created_at: r.created_at, released_at: r.released_at,
    upcoming_release: Date.parse(r.released_at) > now,
  };
}

/** The Service's TagRelease, the `release` of a tag. */
export const TagReleaseSchema = Type.Object({ tag_name: Type.String(), description: Type.Union([Type.String(), Type.Null()]) });

/** Where a release lives on the web: `<project web url>/-/releases/<tag>` (project_release_url). */
export function releaseWebUrl(projectWebUrl: string, tag: string): string {
  return `${projectWebUrl}/-/releases/${encodeURIComponent(tag)}`;
}

export function presentReleaseLink(link: ReleaseLinkRow, releaseUrl: string, projectWebUrl: string): ReleaseLink {
  return {
    id: link.id, name: link.name, url: link.url,
    // Releases::LinkPresenter: a direct asset's address is the release's /downloads plus its path.
    direct_asset_url: link.filepath ? `${releaseUrl}/downloads${link.filepath}` : link.url,
    // Releases::Link#internal?: a link into the project itself.
    external: !link.url.startsWith(projectWebUrl),
    link_type: link.link_type,
  };
}

/** The archive formats a release offers as sources (Releases::Source::FORMATS). */
const SOURCE_FORMATS = ['zip', 'tar.gz', 'tar.bz2', 'tar'];

export interface ReleaseView {
  projectWebUrl: string;
  projectPath: string;
  /** Path part of projectWebUrl (`/group/project`), for commit_path and tag_path. */
  projectWebPath: string;
  canDownloadCode: boolean;
  canReadMilestone: boolean;
  canUpdate: boolean;
  includeHtml: boolean;
}

export interface ReleaseParts {
  author: UserBasic | null;
  commit: Commit | null;
  milestones: { row: MilestoneRow; ownerWebUrl: string; stats: { total: number; closed: number } }[];
  links: ReleaseLinkRow[];
  evidences: ReleaseEvidenceRow[];
  descriptionHtml: string;
}

export function presentRelease(r: ReleaseRow, p: ReleaseParts, v: ReleaseView, now = Date.now()): Release {
  const tag = encodeURIComponent(r.tag);
  const selfUrl = releaseWebUrl(v.projectWebUrl, r.tag);
  const e = { name: r.name } as Release;
  if (v.canDownloadCode) e.tag_name = r.tag;
  e.description = r.description;
  if (v.includeHtml) e.description_html = p.descriptionHtml;
  e.created_at = r.created_at;
  e.released_at = r.released_at;
  if (p.author) e.author = p.author;
  if (v.canDownloadCode) e.commit = p.commit;
  e.upcoming_release = Date.parse(r.released_at) > now;
  if (p.milestones.length && v.canReadMilestone) {
    e.milestones = p.milestones.map((m) => ({ ...presentMilestone(m.row, m.ownerWebUrl), issue_stats: m.stats }));
  }
  if (v.canDownloadCode) {
    if (r.sha) e.commit_path = `${v.projectWebPath}/-/commit/${r.sha}`;
    e.tag_path = `${v.projectWebPath}/-/tags/${tag}`;
  }
  const links = p.links.map((l) => presentReleaseLink(l, selfUrl, v.projectWebUrl));
  const sources = SOURCE_FORMATS.map((format) => ({
    format, url: `${v.projectWebUrl}/-/archive/${tag}/${encodeURIComponent(v.projectPath)}-${tag}.${format}`,
  }));
  e.assets = v.canDownloadCode ? { count: links.length + sources.length, sources, links } : { count: links.length, links };
  if (v.canDownloadCode) {
    e.evidences = p.evidences.map((ev) => ({
      sha: ev.summary_sha, filepath: `${selfUrl}/evidences/${ev.id}.json`, collected_at: ev.created_at,
    }));
  }
  // ReleasePresenter#params_for_issues_and_mrs, keys in the order Rails' to_query sorts them.
  const list = (kind: string, state: string) => `${v.projectWebUrl}/-/${kind}?release_tag=${tag}&scope=all&state=${state}`;
  e._links = {
    self: selfUrl,
    opened_merge_requests_url: list('merge_requests', 'opened'),
    merged_merge_requests_url: list('merge_requests', 'merged'),
    closed_merge_requests_url: list('merge_requests', 'closed'),
    opened_issues_url: list('issues', 'opened'),
    closed_issues_url: list('issues', 'closed'),
  };
  if (v.canUpdate) e._links.edit_url = `${selfUrl}/edit`;
  return e;
}
