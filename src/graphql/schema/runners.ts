/**
 * Runners: `runners(type, status, paused, tagList)`, `runner(id)` and the `runnerUpdate` /
 * `runnerDelete` mutations, as the Service 15.2 answers them:
 * - `runners` lists every runner to administrators (REST's GET /runners/all) and nothing to anyone
 *   else: Ci::RunnersFinder without a project or group refuses non-administrators and answers the
 *   refusal with an empty list (`rescue Gitlab::Access::AccessDeniedError; Ci::Runner.none`), not
 *   an error. (REST's GET /runners, the caller's own runners, has no counterpart there.)
 * - `runner(id)` and the mutations take Ci::RunnerPolicy's read_runner / update_runner /
 *   delete_runner: administrators, or the runner's owners (Maintainers of a project runner's
 *   projects, Owners of a group runner's group), the same rule as REST's changes
 *   (domain/runners/runner-access.ts). Unlike REST's GET /runners/:id, an instance runner is not
 *   shown to everyone signed in: its owners are the administrators.
 */
import { GraphQLError } from 'graphql';
import { boundedText } from '../bounds.ts';
import { isStorableText } from '../../db/constraints.ts';
import type { RunnerRow } from '../../db/tables/ci.ts';
import { deleteRunner, findRunner, runnersQuery, STALE_TIMEOUT_MS, updateRunner } from '../../domain/runners/runners.queries.ts';
import { lastContact } from '../../domain/runners/contacts.ts';
import { normalizeTags, runnerErrors } from '../../domain/runners/register-runner.ts';
import { MODELS, toGid, type ParsedGid } from '../global-id.ts';
import { connectionFromArray, connectionFromQuery, type ConnectionArgs } from '../connection.ts';
import { canAdminRunner } from '../../domain/runners/runner-access.ts';
import { assertMayWrite, resourceNotAvailable } from '../access.ts';
import type { GqlContext } from '../context.ts';
import { ONLINE_CONTACT_TIMEOUT_MS } from '../../domain/runners/runners.queries.ts';

export const typeDefs = /* GraphQL */ `
  enum CiRunnerStatus { ACTIVE PAUSED ONLINE OFFLINE STALE NEVER_CONTACTED NOT_CONNECTED }
  enum CiRunnerType { INSTANCE_TYPE GROUP_TYPE PROJECT_TYPE }
  enum CiRunnerAccessLevel { NOT_PROTECTED REF_PROTECTED }

  type CiRunner {
    id: CiRunnerID!
    description: String
    shortSha: String
    status(legacyMode: String): CiRunnerStatus!
    paused: Boolean!
    active: Boolean!
    locked: Boolean
    runUntagged: Boolean!
    tagList: [String!]
    accessLevel: CiRunnerAccessLevel!
    maximumTimeout: Int
    maintenanceNote: String
    contactedAt: Time
    createdAt: Time
    runnerType: CiRunnerType!
    version: String
    revision: String
    platformName: String
    architectureName: String
    ipAddress: String
    executorName: String
    adminUrl: String
    editAdminUrl: String
  }
  type CiRunnerEdge { cursor: String! node: CiRunner }
  type CiRunnerConnection { edges: [CiRunnerEdge] nodes: [CiRunner] pageInfo: PageInfo! count: Int! }

  extend type Query {
    "Find runners visible to the current user."
    runners(type: CiRunnerType, status: CiRunnerStatus, paused: Boolean, tagList: [String!],
      after: String, before: String, first: Int, last: Int): CiRunnerConnection
    "Find a runner."
    runner(id: CiRunnerID!): CiRunner
  }

  input RunnerUpdateInput {
    clientMutationId: String
    id: CiRunnerID!
    description: String
    maintenanceNote: String
    maximumTimeout: Int
    accessLevel: CiRunnerAccessLevel
    active: Boolean
    paused: Boolean
    locked: Boolean
    runUntagged: Boolean
    tagList: [String!]
  }
  type RunnerUpdatePayload { clientMutationId: String errors: [String!]! runner: CiRunner }

  input RunnerDeleteInput { clientMutationId: String id: CiRunnerID! }
  type RunnerDeletePayload { clientMutationId: String errors: [String!]! }

  extend type Mutation {
    runnerUpdate(input: RunnerUpdateInput!): RunnerUpdatePayload
    runnerDelete(input: RunnerDeleteInput!): RunnerDeletePayload
  }
`;

const MAX_TEXT = 1024;
const MAX_TAGS = 100;

function status(r: RunnerRow, now = Date.now()): string {
  const contacted = lastContact(r);
  if (contacted === null) return now - Date.parse(r.created_at) > STALE_TIMEOUT_MS ? 'STALE' : 'NEVER_CONTACTED';
  const since = now - Date.parse(contacted);
  if (since > STALE_TIMEOUT_MS) return 'STALE';
  return since < ONLINE_CONTACT_TIMEOUT_MS ? 'ONLINE' : 'OFFLINE';
}

/** "tag_list" → "Tag list", as the Service's full error messages name attributes. */
function fullMessages(errors: Record<string, string[]>): string[] {
  return Object.entries(errors).flatMap(([field, msgs]) => {
    const name = field.replace(/_/g, ' ');
    return msgs.map((m) => `${name.charAt(0).toUpperCase()}${name.slice(1)} ${m}`);
  });
}

type UpdateInput = {
  clientMutationId?: string | null; id: ParsedGid; description?: string | null; maintenanceNote?: string | null;
  maximumTimeout?: number | null;
  accessLevel?: string | null; active?: boolean | null; paused?: boolean | null; locked?: boolean | null;
  runUntagged?: boolean | null; tagList?: string[] | null;
};

/** The runner, when the viewer owns it (administrators every runner); otherwise nothing. */
async function ownedRunner(ctx: GqlContext, id: number): Promise<RunnerRow | null> {
  const runner = ctx.viewer ? await findRunner(ctx.kiln.db, id) : undefined;
  return runner && await canAdminRunner(ctx.kiln.db, ctx.viewer!, runner) ? runner : null;
}

/** A runner the caller may change (REST PUT/DELETE /runners/:id's rule); otherwise not available. */
async function adminRunner(ctx: GqlContext, id: number): Promise<RunnerRow> {
  assertMayWrite(ctx);
  const runner = await ownedRunner(ctx, id);
  if (!runner) throw resourceNotAvailable();
  return runner;
}

export const resolvers = {
  CiRunner: {
    id: (r: RunnerRow) => toGid(MODELS.runner, r.id),
    shortSha: (r: RunnerRow) => r.token_digest.slice(0, 8),
    status: (r: RunnerRow) => status(r),
    paused: (r: RunnerRow) => r.active === 0,
    active: (r: RunnerRow) => r.active === 1,
    locked: (r: RunnerRow) => r.locked === 1,
    runUntagged: (r: RunnerRow) => r.run_untagged === 1,
    tagList: (r: RunnerRow) => (r.tag_list === '' ? [] : r.tag_list.split(' ')),
    accessLevel: (r: RunnerRow) => r.access_level.toUpperCase(),
    maximumTimeout: (r: RunnerRow) => r.maximum_timeout,
    maintenanceNote: (r: RunnerRow) => r.maintenance_note,
    contactedAt: (r: RunnerRow) => lastContact(r),
    createdAt: (r: RunnerRow) => r.created_at,
    runnerType: (r: RunnerRow) => r.runner_type.toUpperCase(),
    platformName: (r: RunnerRow) => r.platform,
    architectureName: (r: RunnerRow) => r.architecture,
    ipAddress: (r: RunnerRow, _: unknown, ctx: GqlContext) => (ctx.viewer?.admin === 1 ? r.ip_address : null),
    executorName: () => null,
    adminUrl: (
      r: RunnerRow, _: unknown, ctx: GqlContext,
    ) => (ctx.viewer?.admin === 1 ? `${ctx.kiln.config.externalUrl}/admin/runners/${r.id}` : null),
    editAdminUrl: (
      r: RunnerRow, _: unknown, ctx: GqlContext,
    ) => (ctx.viewer?.admin === 1 ? `${ctx.kiln.config.externalUrl}/admin/runners/${r.id}/edit` : null),
  },
  Query: {
    runners: (
      _: unknown,
      args: ConnectionArgs & { type?: string | null; status?: string | null; paused?: boolean | null; tagList?: string[] | null },
      ctx: GqlContext,
    ) => {
      if (args.tagList && args.tagList.length > MAX_TAGS) throw new GraphQLError(`tagList is too long (maximum is ${MAX_TAGS} tags)`);
      args.tagList?.forEach((t) => boundedText(t, 'tagList', MAX_TEXT));
      const statusFilter = args.status === 'ACTIVE' ? undefined : args.status === 'PAUSED' ? undefined : args.status?.toLowerCase();
      const paused = args.status === 'ACTIVE' ? false : args.status === 'PAUSED' ? true : args.paused ?? undefined;
      // Administrators only; the Service's finder answers anyone else (anonymous too) with no runners.
      if (ctx.viewer?.admin !== 1) return connectionFromArray<RunnerRow>([], args, 'desc');
      return connectionFromQuery(runnersQuery(ctx.kiln.db, {
        type: args.type?.toLowerCase(), status: statusFilter, paused, tagList: args.tagList ?? undefined, now: new Date(),
      }), args, 'desc');
    },
    runner: (_: unknown, args: { id: ParsedGid }, ctx: GqlContext) => ownedRunner(ctx, args.id.id),
  },
  Mutation: {
    runnerUpdate: async (_: unknown, { input }: { input: UpdateInput }, ctx: GqlContext) => {
      const runner = await adminRunner(ctx, input.id.id);
      for (const v of [input.description, input.maintenanceNote]) {
        if (typeof v === 'string' && (v.length > MAX_TEXT * 64 || !isStorableText(v))) {
          throw new GraphQLError('Text is too long or holds a NUL byte');
        }
      }
      if (input.tagList && (input.tagList.length > MAX_TAGS || input.tagList.some((t) => t.length > MAX_TEXT || !isStorableText(t)))) {
        throw new GraphQLError('tagList is too long');
      }
      if (typeof input.maximumTimeout === 'number' && (input.maximumTimeout < 0 || input.maximumTimeout > 2 ** 31 - 1)) {
        throw new GraphQLError('maximumTimeout is out of range');
      }
      const tagList = input.tagList ? normalizeTags(input.tagList) : runner.tag_list === '' ? [] : runner.tag_list.split(' ');
      const runUntagged = typeof input.runUntagged === 'boolean' ? input.runUntagged : runner.run_untagged === 1;
      const maintenanceNote = input.maintenanceNote === undefined ? runner.maintenance_note : input.maintenanceNote;
      const maximumTimeout = input.maximumTimeout === undefined ? runner.maximum_timeout : input.maximumTimeout;
      const errors = runnerErrors({ maintenanceNote, tagList, runUntagged, maximumTimeout });
      if (Object.keys(errors).length > 0) {
        return { clientMutationId: input.clientMutationId ?? null, errors: fullMessages(errors), runner: null };
      }
      const active = typeof input.paused === 'boolean'
        ? !input.paused
        : typeof input.active === 'boolean' ? input.active : runner.active === 1;
      const updated = await updateRunner(ctx.kiln.db, runner.id, {
        description: input.description === undefined ? runner.description : input.description,
        active: active ? 1 : 0,
        tag_list: tagList.join(' '),
        run_untagged: runUntagged ? 1 : 0,
        locked: typeof input.locked === 'boolean' ? (input.locked ? 1 : 0) : runner.locked,
        access_level: input.accessLevel ? input.accessLevel.toLowerCase() : runner.access_level,
        maximum_timeout: maximumTimeout,
        maintenance_note: maintenanceNote,
      });
      return { clientMutationId: input.clientMutationId ?? null, errors: [], runner: updated };
    },
    runnerDelete: async (_: unknown, { input }: { input: { clientMutationId?: string | null; id: ParsedGid } }, ctx: GqlContext) => {
      const runner = await adminRunner(ctx, input.id.id);
      await deleteRunner(ctx.kiln.db, runner.id);
      return { clientMutationId: input.clientMutationId ?? null, errors: [] };
    },
  },
};
