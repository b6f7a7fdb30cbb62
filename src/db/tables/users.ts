/** Tables of the users area beyond the foundation's (migration 2026-11-22T1000_users_area). */

/** Instance settings by name; `value` is JSON. */
export interface ApplicationSettingsTable {
  name: string;
  value: string;
  updated_at: string;
}

declare module '../types.ts' {
  interface DB {
    application_settings: ApplicationSettingsTable;
  }
}
