/**
 * Members of projects and groups (lib/api/members.rb): one set of routes for both sources, as
 * the Service declares them. Reading takes any access to the source; changing takes
 * admin_members (project Maintainer) or admin_group_member (group Owner); only owners and
 * administrators grant or change Owner; a group always keeps an Owner (the Service's
 * group_member_policy refuses removing or demoting the last one with 403); users may leave.
 */
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { sql, type SelectQueryBuilder } from 'kysely';
import { Type } from 'typebox';
import type { MemberSourceType } from '../../../db/tables/projects.ts';
import { ACCESS_LEVELS, MEMBER_ACCESS_LEVELS, type Actor } from '../../../domain/permissions/access.ts';
import {
  addMember, changeMemberKeepingAnOwner, countOwners, findMember, membersQuery,
} from '../../../domain/members/members.queries.ts';
import { findUserById } from '../../../domain/users/users.queries.ts';
import { canOnProject } from '../../../domain/permissions/project.policy.ts';
import { canOnGroup } from '../../../domain/permissions/group.policy.ts';
import { isUniqueViolation } from '../../../db/constraints.ts';
import { conflict, forbidden, notFound, recordNotFound, validationFailed } from '../../errors.ts';
import { defineParams, P } from '../../input/params.ts';
import { paginate, paginationParams } from '../../lists/pagination.ts';
import { MemberSchema, presentMember, type MemberRowWithUser } from '../../entities/member.ts';
import { loadGroup, loadProject } from '../../loaders/containers.ts';
import { audit, ROLE_NAMES } from '../../audit.ts';
import { inheritedMembersQuery } from '../../../domain/members/inherited-members.ts';
import { route } from '../../route.ts';

const accessLevel = P.integer({ description: '10 guest, 20 reporter, 30 developer, 40 maintainer, 50 owner' });
// user_ids: Array[Integer] with the Service's comma-separated coercion (`user_ids=1,2`).
const userIds = P.array(P.integer(), { commaSeparated: true, description: 'only these users (comma-separated ids or an array)' });
const listParams = defineParams({ id: P.string(), query: P.optional(P.string()), user_ids: P.optional(userIds), ...paginationParams });
// `state` is the Service's (Premium) membership-state filter on the inherited list; every kiln
// membership is `active` (the entity's membership_state), so `awaiting` lists none.
const allParams = defineParams({
  id: P.string(), query: P.optional(P.string()), user_ids: P.optional(userIds),
  state: P.optional(P.oneOf(['awaiting', 'active'] as const)), ...paginationParams,
});
const showParams = defineParams({ id: P.string(), user_id: P.integer() });
const addParams = defineParams({ id: P.string(), user_id: P.integer(), access_level: accessLevel, expires_at: P.optional(P.date()) });
const editParams = defineParams({ id: P.string(), user_id: P.integer(), access_level: accessLevel, expires_at: P.optional(P.date()) });

interface Source {
  type: MemberSourceType;
  id: number;
  /** The groups whose members the source inherits: a group's lineage, a project's namespace's (ancestors first). */
  lineage: number[];
  actor: Actor;
  canRead: boolean;
  canAdmin: boolean;
  /** Full path of the project or group, for audit events. */
  fullPath: string;
}

async function loadSource(request: FastifyRequest, kind: 'projects' | 'groups', id: string): Promise<Source> {
  if (kind === 'projects') {
    const ctx = await loadProject(request, id);
    return {
      type: 'Project', id: ctx.project.id, lineage: ctx.lineage, actor: ctx.actor,
      fullPath: `${ctx.namespace.fullPath}/${ctx.project.path}`,
      canRead: canOnProject(ctx.actor, 'read_members', ctx.project), canAdmin: canOnProject(ctx.actor, 'admin_members', ctx.project),
    };
  }
  const ctx = await loadGroup(request, id);
  return {
    type: 'Namespace', id: ctx.group.id, lineage: ctx.lineage, actor: ctx.actor, fullPath: ctx.fullPath, canRead: true,
    canAdmin: canOnGroup(ctx.actor, 'admin_group_member', ctx.group),
  };
}

/**
 * The list filters (API::Helpers::MembersHelpers#retrieve_members): `query` matches the username
 * or the name, `user_ids` keeps those users.
 */
function filterMembers<QB extends SelectQueryBuilder<any, any, any>>(qb: QB, input: { query?: string; user_ids?: number[] | null }): QB {
  let out = qb;
  if (input.query) {
    const q = `%${input.query.toLowerCase()}%`;
    out = out.where((eb) => eb.or([
      eb(eb.fn('lower', ['users.username']), 'like', q), eb(eb.fn('lower', ['users.name']), 'like', q),
    ])) as QB;
  }
  if (input.user_ids && input.user_ids.length > 0) out = out.where('users.id', 'in', input.user_ids) as QB;
  return out;
}

/** Access levels outside the list are a model validation error (Member validates inclusion). */
const invalidLevel = () => validationFailed({ access_level: ['is not included in the list'] });

/** A membership change, recorded on the project or group (the Service's "add/remove user_access as Role"). */
function auditMember(
  request: FastifyRequest, source: Source, user: { id: number; username: string },
  change: { kind: 'add' | 'remove'; what: string; as?: string },
) {
  return audit(request, {
    entityType: source.type === 'Project' ? 'Project' : 'Group', entityId: source.id, entityPath: source.fullPath,
    target: { id: user.id, type: 'User', details: user.username }, change,
  });
}

const members: FastifyPluginAsync = async (app) => {
  const { db, config } = app.kiln;
  const externalUrl = config.externalUrl;

  async function present(row: MemberRowWithUser) {
    const createdBy = row.member_created_by_id ? await findUserById(db, row.member_created_by_id) : undefined;
    return presentMember(row, createdBy, externalUrl);
  }

  const inheritedMembers = (source: Source) => inheritedMembersQuery(db, source);

  async function memberWithUser(source: Source, userId: number): Promise<MemberRowWithUser> {
    const row = await membersQuery(db, source.type, source.id).where('members.user_id', '=', userId).executeTakeFirst();
    // find_by! on the membership: ActiveRecord's 404 text (reference §6.2).
    if (!row) throw recordNotFound();
    return row as MemberRowWithUser;
  }

  /** Owner may be granted, changed or removed only by owners and administrators. */
  function guardOwnerChange(source: Source, ...levels: number[]): void {
    if (levels.some((l) => l >= ACCESS_LEVELS.owner) && !source.actor.user?.admin && source.actor.accessLevel < ACCESS_LEVELS.owner) {
      throw forbidden();
    }
  }

  async function guardLastOwner(source: Source, currentLevel: number, newLevel: number | null): Promise<void> {
    if (source.type !== 'Namespace' || currentLevel !== ACCESS_LEVELS.owner || newLevel === ACCESS_LEVELS.owner) return;
    if ((await countOwners(db, source.id)) <= 1) throw forbidden();
  }

  for (const kind of ['projects', 'groups'] as const) {
    const tag = kind === 'projects' ? 'project members' : 'group members';

    route(app, {
      method: 'GET', url: `/${kind}/:id/members`, auth: 'required', params: listParams,
      schema: { summary: `Direct members of a ${kind.slice(0, -1)}`, tags: [tag], response: { 200: Type.Array(MemberSchema) } },
    }, async ({ request, reply, input }) => {
      const source = await loadSource(request, kind, input.id);
      if (!source.canRead) throw forbidden();
      const rows = await paginate(db, request, reply, filterMembers(membersQuery(db, source.type, source.id), input));
      return Promise.all(rows.map((r) => present(r as MemberRowWithUser)));
    });

    // Declared before `/members/:user_id`, and static, so `all` is never read as a user id.
    route(app, {
      method: 'GET', url: `/${kind}/:id/members/all`, auth: 'required', params: allParams,
      schema: {
        summary: `Members of a ${kind.slice(0, -1)}, including those inherited from ancestor groups`, tags: [tag],
        response: { 200: Type.Array(MemberSchema) },
      },
    }, async ({ request, reply, input }) => {
      const source = await loadSource(request, kind, input.id);
      if (!source.canRead) throw forbidden();
      let qb = filterMembers(await inheritedMembers(source), input);
      if (input.state === 'awaiting') qb = qb.where(sql<boolean>`1 = 0`);
      const rows = await paginate(db, request, reply, qb);
      return Promise.all(rows.map((r) => present(r as MemberRowWithUser)));
    });

    route(app, {
      method: 'GET', url: `/${kind}/:id/members/all/:user_id`, auth: 'required', params: showParams,
      schema: { summary: 'A member, direct or inherited from an ancestor group', tags: [tag], response: { 200: MemberSchema } },
    }, async ({ request, input }) => {
      const source = await loadSource(request, kind, input.id);
      if (!source.canRead) throw forbidden();
      const row = await (await inheritedMembers(source)).where('users.id', '=', input.user_id).executeTakeFirst();
      // find_by! on the finder's relation: ActiveRecord's 404 text (reference §6.2).
      if (!row) throw recordNotFound();
      return present(row as MemberRowWithUser);
    });

    route(app, {
      method: 'GET', url: `/${kind}/:id/members/:user_id`, auth: 'required', params: showParams,
      schema: { summary: 'A direct member', tags: [tag], response: { 200: MemberSchema } },
    }, async ({ request, input }) => {
      const source = await loadSource(request, kind, input.id);
      if (!source.canRead) throw forbidden();
      return present(await memberWithUser(source, input.user_id));
    });

    route(app, {
      method: 'POST', url: `/${kind}/:id/members`, auth: 'required', params: addParams,
      schema: { summary: 'Add a member', tags: [tag], response: { 201: MemberSchema } },
    }, async ({ request, reply, input, caller }) => {
      const source = await loadSource(request, kind, input.id);
      if (!source.canAdmin) throw forbidden();
      if (!(MEMBER_ACCESS_LEVELS as readonly number[]).includes(input.access_level)) throw invalidLevel();
      guardOwnerChange(source, input.access_level);
      const user = await findUserById(db, input.user_id);
      if (!user) throw notFound('User');
      if (await findMember(db, source.type, source.id, user.id)) throw conflict('Member already exists');
      try {
        await addMember(db, {
          sourceType: source.type, sourceId: source.id, userId: user.id, accessLevel: input.access_level,
          expiresAt: input.expires_at ?? null, createdById: caller.user.id,
        });
      } catch (err) {
        if (isUniqueViolation(err)) throw conflict('Member already exists');
        throw err;
      }
      await auditMember(request, source, user, { kind: 'add', what: 'user_access', as: ROLE_NAMES[input.access_level] });
      reply.code(201);
      return present(await memberWithUser(source, user.id));
    });

    route(app, {
      method: 'PUT', url: `/${kind}/:id/members/:user_id`, auth: 'required', params: editParams,
      schema: { summary: "Change a member's access level", tags: [tag], response: { 200: MemberSchema } },
    }, async ({ request, input }) => {
      const source = await loadSource(request, kind, input.id);
      if (!source.canAdmin) throw forbidden();
      const member = await findMember(db, source.type, source.id, input.user_id);
      if (!member) throw recordNotFound();
      if (!(MEMBER_ACCESS_LEVELS as readonly number[]).includes(input.access_level)) throw invalidLevel();
      guardOwnerChange(source, input.access_level, member.access_level);
      await guardLastOwner(source, member.access_level, input.access_level);
      const set = { accessLevel: input.access_level, ...(input.expires_at !== undefined ? { expiresAt: input.expires_at } : {}) };
      if (!(await changeMemberKeepingAnOwner(db, member.id, set))) throw forbidden();
      const changed = await findUserById(db, input.user_id);
      if (changed && member.access_level !== input.access_level) {
        await audit(request, {
          entityType: source.type === 'Project' ? 'Project' : 'Group', entityId: source.id, entityPath: source.fullPath,
          target: { id: changed.id, type: 'User', details: changed.username },
          change: { kind: 'change', what: 'access_level', from: ROLE_NAMES[member.access_level], to: ROLE_NAMES[input.access_level] },
        });
      }
      return present(await memberWithUser(source, input.user_id));
    });

    route(app, {
      method: 'DELETE', url: `/${kind}/:id/members/:user_id`, auth: 'required', params: showParams,
      schema: { summary: 'Remove a member', tags: [tag] },
    }, async ({ request, reply, input, caller }) => {
      const source = await loadSource(request, kind, input.id);
      const leaving = caller.user.id === input.user_id;
      if (!source.canAdmin && !leaving) throw forbidden();
      const member = await findMember(db, source.type, source.id, input.user_id);
      if (!member) throw recordNotFound();
      if (!leaving) guardOwnerChange(source, member.access_level);
      await guardLastOwner(source, member.access_level, null);
      if (!(await changeMemberKeepingAnOwner(db, member.id, null))) throw forbidden();
      const removed = await findUserById(db, input.user_id);
      if (removed) await auditMember(request, source, removed, { kind: 'remove', what: 'user_access' });
      return reply.code(204).send();
    });
  }
};

export default members;
