/**
 * The Todo entity (lib/api/entities/todo.rb of the Service 15.2): its project as ProjectIdentity
 * and group as NamespaceBasic (each only when set), the author, the action's name, the target as
 * its own entity (Issue for issues, MergeRequest for merge requests), the target's web address (with `#note_<id>` for a todo
 * raised by a comment), and its body: the comment's text, else the target's title.
 */
import { Type, type Static } from 'typebox';
import { IssueSchema } from './issue.ts';
import { MergeRequestSchema } from './merge-request.ts';
import { NamespaceBasicSchema, ProjectIdentitySchema } from './project.ts';
import { UserBasicSchema } from './user.ts';
import { exactJson } from './serializers.ts';

// Written as built (exactJson): `project` and `group` stand where the Service writes them, after `id`.
export const TodoSchema = exactJson(Type.Object({
  id: Type.Integer(),
  project: Type.Optional(ProjectIdentitySchema),
  group: Type.Optional(NamespaceBasicSchema),
  author: UserBasicSchema,
  action_name: Type.String(),
  target_type: Type.String(),
  target: Type.Union([IssueSchema, MergeRequestSchema]),
  target_url: Type.String(),
  body: Type.String(),
  state: Type.String(),
  created_at: Type.String(),
  updated_at: Type.String(),
}, { title: 'Todo' }));
export const TodoListSchema = exactJson(Type.Array(TodoSchema));

export type Todo = Static<typeof TodoSchema>;
