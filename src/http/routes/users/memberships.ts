/**
 * GET /users/:id/memberships (spec, Users; administrators): the user's direct project and group
 * memberships. `type` is validated before the administrator check, as Grape validates before the
 * endpoint body runs (reference §6.4). access_level is an integer, as the Service's Membership
 * entity sends it (reference §1.3; the spec's text says "a string holding an integer", but go-gitlab
 * decodes it into an int and fails on a string: README, Compatibility).
 */
import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import { findUserById } from '../../../domain/users/users.queries.ts';
import { membershipsQuery } from '../../../domain/members/members.queries.ts';
import { authenticatedAsAdmin } from '../../auth/admin.ts';
import { notFound } from '../../errors.ts';
import { defineParams, P } from '../../input/params.ts';
import { paginate, paginationParams } from '../../lists/pagination.ts';
import { route } from '../../route.ts';

const MembershipSchema = Type.Object({
  source_id: Type.Integer(),
  source_name: Type.String(),
  source_type: Type.String(),
  access_level: Type.Integer(),
}, { title: 'Membership' });

const params = defineParams({
  id: P.integer({ description: 'user id' }),
  type: P.optional(P.oneOf(['Project', 'Namespace'] as const)),
  ...paginationParams,
});

const memberships: FastifyPluginAsync = async (app) => {
  const { db } = app.kiln;

  route(app, {
    method: 'GET', url: '/users/:id(^\\d+$)/memberships', auth: 'required', params,
    schema: { summary: "A user's direct memberships (administrators)", tags: ['users'], response: { 200: Type.Array(MembershipSchema) } },
  }, async ({ request, reply, input }) => {
    authenticatedAsAdmin(request);
    const user = await findUserById(db, input.id);
    if (!user) throw notFound('User');
    const rows = await paginate(db, request, reply, membershipsQuery(db, user.id, input.type));
    return rows.map((r) => ({
      source_id: r.source_id,
      source_name: (r.source_type === 'Project' ? r.project_name : r.group_name) ?? '',
      source_type: r.source_type,
      access_level: r.access_level,
    }));
  });
};

export default memberships;
