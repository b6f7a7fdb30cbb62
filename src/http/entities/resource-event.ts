/**
 * Resource events of an issue (lib/api/entities/resource_label_event.rb, resource_milestone_event.rb,
 * resource_state_event.rb of the Service 15.2): who changed its labels, milestone or state and
 * when, with the label as LabelBasic and the milestone as the Milestone entity (null once deleted).
 */
import { Type, type Static } from 'typebox';
import { UserBasicSchema } from './user.ts';
import { LabelBasicSchema } from './label.ts';
import { MilestoneSchema } from './milestone.ts';

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);

const common = {
  id: Type.Integer(),
  user: Nullable(UserBasicSchema),
  created_at: Type.String(),
  resource_type: Type.String(),
  resource_id: Type.Integer(),
};

export const ResourceLabelEventSchema = Type.Object({
  ...common, label: Nullable(LabelBasicSchema), action: Type.String(),
}, { title: 'ResourceLabelEvent' });

export const ResourceMilestoneEventSchema = Type.Object({
  ...common, milestone: Nullable(MilestoneSchema), action: Type.String(), state: Type.String(),
}, { title: 'ResourceMilestoneEvent' });

export const ResourceStateEventSchema = Type.Object({ ...common, state: Type.String() }, { title: 'ResourceStateEvent' });

export type ResourceLabelEvent = Static<typeof ResourceLabelEventSchema>;
export type ResourceMilestoneEvent = Static<typeof ResourceMilestoneEventSchema>;
export type ResourceStateEvent = Static<typeof ResourceStateEventSchema>;
