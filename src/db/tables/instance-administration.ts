/**
 * Broadcast messages, project and group custom attributes, notification settings, feature gates
 * (migration 2026-11-29T0800_instance_administration).
 */
import type { Generated, Selectable } from 'kysely';

export type BroadcastType = 'banner' | 'notification';

export interface BroadcastMessagesTable {
  id: Generated<number>;
  message: string;
  /** ISO-8601 UTC. */
  starts_at: string;
  ends_at: string;
  color: string | null;
  font: string | null;
  /** Space-separated access levels. */
  target_access_levels: Generated<string>;
  target_path: string | null;
  broadcast_type: BroadcastType;
  /** 0/1; null until set. */
  dismissable: number | null;
  created_at: string;
  updated_at: string;
}
export type BroadcastMessageRow = Selectable<BroadcastMessagesTable>;

export interface ProjectCustomAttributesTable {
  id: Generated<number>;
  project_id: number;
  key: string;
  value: string;
  created_at: string;
  updated_at: string;
}

export interface GroupCustomAttributesTable {
  id: Generated<number>;
  group_id: number;
  key: string;
  value: string;
  created_at: string;
  updated_at: string;
}

export type NotificationLevel = 'disabled' | 'participating' | 'watch' | 'global' | 'mention' | 'custom';

export interface NotificationSettingsTable {
  id: Generated<number>;
  user_id: number;
  /** Both null: the user's global setting. */
  project_id: number | null;
  group_id: number | null;
  level: NotificationLevel;
  /** JSON object of custom events set explicitly (`{"new_note": true}`). */
  events: Generated<string>;
  /** Global row only: the address notifications go to (null: the primary email). */
  notification_email: string | null;
  created_at: string;
  updated_at: string;
}
export type NotificationSettingRow = Selectable<NotificationSettingsTable>;

export interface FeatureGatesTable {
  id: Generated<number>;
  feature_key: string;
  /** boolean, percentage_of_time, percentage_of_actors or actors. */
  key: string;
  value: string;
  created_at: string;
  updated_at: string;
}
export type FeatureGateRow = Selectable<FeatureGatesTable>;

declare module '../types.ts' {
  interface DB {
    broadcast_messages: BroadcastMessagesTable;
    project_custom_attributes: ProjectCustomAttributesTable;
    group_custom_attributes: GroupCustomAttributesTable;
    notification_settings: NotificationSettingsTable;
    feature_gates: FeatureGatesTable;
  }
}
