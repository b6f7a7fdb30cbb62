/**
 * The import and export rate limits (the Service's Gitlab::ApplicationRateLimiter keys
 * project_export, project_download_export, project_import, group_export, group_download_export,
 * group_import: a threshold per minute from the application setting of the same name + `_limit`,
 * 0 turning it off), counted by the same per-minute limiter as searches (search-rate-limit.ts).
 */
import type { FastifyRequest } from 'fastify';
import { currentSettings } from '../domain/settings/settings.ts';
import { ApiError } from './errors.ts';

export type ImportExportLimit =
  | 'project_export' | 'project_download_export' | 'project_import' | 'group_export' | 'group_download_export' | 'group_import';

/** Throws the Service's 429 when `scope` (the caller, and the project or group where the Service scopes so) went past the limit. */
export async function checkImportExportRateLimit(request: FastifyRequest, key: ImportExportLimit, scope: string): Promise<void> {
  const settings = await currentSettings(request.server.kiln.db);
  const limit = settings[`${key}_limit`];
  if (limit <= 0) return;
  if (!await request.server.searchLimiter.hit(`${key}:${scope}`, limit)) {
    throw new ApiError(
      429, { message: { error: 'This endpoint has been requested too many times. Try again later.' } }, { 'retry-after': '60' },
    );
  }
}
