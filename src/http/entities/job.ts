/**
 * Job entities (spec, Job and Bridge job; reference §3.3): JobBasic → Job (builds) and → Bridge.
 * Everything beyond the row comes in JobExtras, loaded for a whole page at once.
 */
import { Type, type Static } from 'typebox';
import type { BuildRow, JobArtifactRow, PipelineRow, RunnerRow } from '../../db/tables/ci.ts';
import type { UserRow } from '../../db/types.ts';
import { CommitSchema, PipelineBasicSchema, presentCommit, presentPipelineBasic } from './pipeline.ts';
import { RunnerSchema, presentRunner } from './runner.ts';
import { UserSchema, presentUser } from './user.ts';
import { isoMillis } from '../../domain/clock.ts';
import { flat, flatWords } from './serializers.ts';

const NString = Type.Union([Type.String(), Type.Null()]);
const NNumber = Type.Union([Type.Number(), Type.Null()]);

export const JobArtifactSchema = Type.Object({
  file_type: Type.String(),
  size: Type.Integer(),
  filename: Type.String(),
  file_format: NString,
});

export const JobBasicSchema = Type.Object({
  id: Type.Integer(),
  status: Type.String(),
  stage: Type.String(),
  name: Type.String(),
  ref: Type.String(),
  tag: Type.Boolean(),
  coverage: NNumber,
  allow_failure: Type.Boolean(),
  created_at: Type.String(),
  started_at: NString,
  finished_at: NString,
  erased_at: NString,
  duration: NNumber,
  queued_duration: NNumber,
  user: Type.Union([UserSchema, Type.Null()]),
  commit: CommitSchema,
  pipeline: PipelineBasicSchema,
  web_url: Type.String(),
  project: Type.Object({ ci_job_token_scope_enabled: Type.Boolean() }),
}, { title: 'JobBasic' });

export const JobSchema = Type.Object({
  ...JobBasicSchema.properties,
  /** Failed jobs only; bridges carry none (spec, Bridge job). */
  failure_reason: Type.Optional(Type.String()),
  artifacts_file: Type.Optional(Type.Object({ filename: Type.String(), size: Type.Integer() })),
  artifacts: Type.Array(JobArtifactSchema),
  runner: Type.Union([RunnerSchema, Type.Null()]),
  artifacts_expire_at: NString,
  tag_list: Type.Array(Type.String()),
  /** Only in the erase response (spec, Job: download_url). */
  download_url: Type.Optional(Type.Null()),
}, { title: 'Job' });
export type Job = Static<typeof JobSchema>;

export const BridgeSchema = Type.Object({
  ...JobBasicSchema.properties,
  downstream_pipeline: Type.Union([PipelineBasicSchema, Type.Null()]),
}, { title: 'Bridge' });
export type Bridge = Static<typeof BridgeSchema>;

export interface JobExtras {
  externalUrl: string;
  /** Web URL of each project the jobs belong to. */
  projectWebUrls: Map<number, string>;
  pipelines: Map<number, PipelineRow>;
  users: Map<number, UserRow>;
  artifacts: Map<number, JobArtifactRow[]>;
  runners: Map<number, RunnerRow>;
  /** Responses that carry no user (spec: null in cancel, retry, erase and play). */
  withoutUser?: boolean;
  /** A page's jobs share few pipelines: each one's commit and PipelineBasic are made once. */
  presented?: Map<number, { commit: ReturnType<typeof presentCommit>; pipeline: ReturnType<typeof presentPipelineBasic> }>;
  /** Likewise their users (most of a page's jobs have the same one). */
  presentedUsers?: Map<number, ReturnType<typeof presentJobUser>>;
  /** The answer's clock (ms), read once by its first job. */
  now?: number;
}

function presentJobUser(user: UserRow, externalUrl: string) {
  return { ...presentUser(user, {}, { externalUrl, canReadProfile: false }), created_at: user.created_at };
}

/** The columns the job entities are made of: lists read only these (not the job's options and variables). */
export const JOB_ENTITY_COLUMNS = [
  'id', 'type', 'project_id', 'pipeline_id', 'name', 'stage', 'status', 'allow_failure', 'failure_reason', 'ref', 'tag', 'user_id',
  'runner_id', 'tag_list', 'trace_size', 'downstream_pipeline_id', 'created_at', 'queued_at', 'started_at', 'finished_at', 'erased_at',
  'artifacts_expire_at', 'coverage',
] as const satisfies readonly (keyof BuildRow)[];
export type JobEntityRow = Pick<BuildRow, (typeof JOB_ENTITY_COLUMNS)[number]>;

/** Seconds from a stored timestamp to another, or to `now` (ms); null without an end. */
const seconds = (
  from: string, to: string | number | null,
) => (to === null ? null : ((typeof to === 'number' ? to : isoMillis(to)) - isoMillis(from)) / 1000);

type TimedRow = Pick<JobEntityRow, 'status' | 'queued_at' | 'started_at' | 'finished_at'>;

/** Running: its duration runs to now. */
const runsOn = (j: TimedRow) => j.started_at !== null && j.finished_at === null && j.status === 'running';
/** Queued and not started: its queued_duration runs to now. */
const waits = (j: TimedRow) => j.queued_at !== null && j.started_at === null;

/**
 * CommitStatus#duration (started to finished, or to now while running) and #queued_duration
 * (queued to started, or to now while it has not started).
 */
export function jobDurations(j: TimedRow, now: number): { duration: number | null; queued_duration: number | null } {
  return { duration: jobDuration(j, now), queued_duration: jobQueuedDuration(j, now) };
}

const jobDuration = (j: TimedRow, now: number) => (j.started_at ? seconds(j.started_at, runsOn(j) ? now : j.finished_at) : null);
const jobQueuedDuration = (j: TimedRow, now: number) => (j.queued_at ? seconds(j.queued_at, waits(j) ? now : j.started_at) : null);

/** Whether jobDurations(j) moves with the clock (a remembered page recomputes them: remembered-pages.ts). */
export function durationsTick(j: TimedRow): boolean {
  return runsOn(j) || waits(j);
}

/**
 * `failureReason`: builds show a failed job's reason, bridges never (spec, Bridge job).
 * One object literal of a fixed shape (no spreads; an absent failure_reason is `undefined`, which
 * JSON leaves out), measured as the cheapest to build and to write for a page of jobs.
 */
function presentJobBasic(j: JobEntityRow, x: JobExtras, failureReason: boolean) {
  const pipeline = x.pipelines.get(j.pipeline_id)!;
  const webUrl = x.projectWebUrls.get(j.project_id)!;
  const shared = once(
    x.presented ??= new Map(), pipeline.id,
    () => ({ commit: presentCommit(pipeline, webUrl), pipeline: presentPipelineBasic(pipeline, webUrl) }),
  );
  const user = j.user_id === null || x.withoutUser ? undefined : x.users.get(j.user_id);
  // One clock for the whole answer: every job's running durations measured to the same instant.
  const now = x.now ??= Date.now();
  return {
    id: j.id,
    status: j.status,
    stage: j.stage,
    name: j.name,
    ref: j.ref,
    tag: j.tag === 1,
    coverage: j.coverage ?? null,
    allow_failure: j.allow_failure === 1,
    created_at: j.created_at,
    started_at: j.started_at,
    finished_at: j.finished_at,
    erased_at: j.erased_at,
    duration: jobDuration(j, now),
    queued_duration: jobQueuedDuration(j, now),
    // The job's user as the User entity, with created_at (spec, Job: "the user object … also carries").
    user: user ? once(x.presentedUsers ??= new Map(), user.id, () => presentJobUser(user, x.externalUrl)) : null,
    commit: shared.commit,
    pipeline: shared.pipeline,
    // Where the Service's JobBasic exposes it (reference §3.3).
    failure_reason: failureReason && j.status === 'failed' ? j.failure_reason ?? 'unknown_failure' : undefined,
    web_url: flat(webUrl, '/-/jobs/', j.id),
    project: { ci_job_token_scope_enabled: false },
  };
}

/** `map`'s value for `key`, made by `make` the first time. */
function once<K, V>(map: Map<K, V>, key: K, make: () => V): V {
  let value = map.get(key);
  if (value === undefined) {
    value = make();
    map.set(key, value);
  }
  return value;
}

export function presentJob(j: JobEntityRow, x: JobExtras): Job {
  const rows = x.artifacts.get(j.id) ?? [];
  const archive = rows.find((a) => a.file_type === 'archive');
  const artifacts = rows.map((a) => ({ file_type: a.file_type, size: a.size, filename: a.filename, file_format: a.file_format }));
  // A finished job's log is listed among its artifacts, as the Service lists the archived trace.
  if (j.trace_size > 0 && ['success', 'failed', 'canceled'].includes(j.status)) {
    artifacts.push({ file_type: 'trace', size: j.trace_size, filename: 'job.log', file_format: 'raw' });
  }
  const runner = j.runner_id === null ? undefined : x.runners.get(j.runner_id);
  // Added to JobBasic's object rather than spread into a new one (a copy of its 20 fields per job).
  return Object.assign(presentJobBasic(j, x, true), {
    artifacts_file: archive ? { filename: archive.filename, size: archive.size } : undefined,
    artifacts,
    runner: runner ? presentRunner(runner) : null,
    artifacts_expire_at: j.artifacts_expire_at,
    tag_list: flatWords(j.tag_list),
  });
}

export function presentBridge(j: JobEntityRow, x: JobExtras): Bridge {
  const downstream = j.downstream_pipeline_id === null ? undefined : x.pipelines.get(j.downstream_pipeline_id);
  return Object.assign(presentJobBasic(j, x, false), {
    downstream_pipeline: downstream ? presentPipelineBasic(downstream, x.projectWebUrls.get(downstream.project_id)!) : null,
  });
}
