/**
 * Project and group export and import (lib/api/project_export.rb, project_import.rb,
 * group_export.rb, group_import.rb, 15.2). Export: Maintainers of a project (`admin_project`),
 * Owners of a group (`admin_group`); the archive is made by a job and downloaded once finished.
 * Import: a multipart archive into a namespace the caller may create projects in (or, for a
 * group, under a parent they may create subgroups in, or at the top level), made by a job.
 * `remote-import` fetches the archive from an https URL (Import::GitlabProjects::
 * FileAcquisitionStrategies::RemoteFile) behind the `import_project_from_remote_file` flag, to
 * addresses the webhooks' address guard allows. The Service's rate limits apply (import-export-rate-limit.ts).
 */
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { NamespaceRow, UserRow } from '../../../db/types.ts';
import { currentSettings } from '../../../domain/settings/settings.ts';
import { featureEnabled } from '../../../domain/features/features.ts';
import { findNamespaceByIdOrPath, findUserNamespace, namespacePaths } from '../../../domain/namespaces/namespaces.queries.ts';
import { groupActor } from '../../../domain/permissions/actors.ts';
import { canOnGroup } from '../../../domain/permissions/group.policy.ts';
import { VISIBILITIES, visibilityLevel } from '../../../domain/permissions/access.ts';
import { canCreateTopLevelGroup } from '../../../domain/groups/groups.queries.ts';
import { createGroup } from '../../../domain/groups/create-group.ts';
import { countProjectsInNamespace, findProjectById } from '../../../domain/projects/projects.queries.ts';
import { checkDeliveryUrl, urlProblem } from '../../../domain/web-hooks/url-policy.ts';
import { guardedLookup } from '../../../domain/web-hooks/delivery.ts';
import { exportArchiveName, exportFile, requestProjectExport } from '../../../domain/import-export/project-export.ts';
import { requestProjectImport, storeImportFile } from '../../../domain/import-export/request-import.ts';
import { queueGroupImport, requestGroupExport } from '../../../domain/import-export/group-export-import.ts';
import { findGroupExport, findProjectExport } from '../../../domain/import-export/import-export.queries.ts';
import { presignedGetUrl } from '../../../domain/import-export/s3-presign.ts';
import { ApiError, badRequestMessage, forbidden, invalidParams, missingAttribute, notFound, validationFailed } from '../../errors.ts';
import { defineParams, P } from '../../input/params.ts';
import { isMultipart, multipartParts } from '../../input/multipart.ts';
import { authorizeGroup, authorizeProject, loadGroup, loadProject } from '../../loaders/containers.ts';
import {
  presentExportStatus, presentImportStatus, ProjectExportStatusSchema, ProjectImportStatusSchema,
} from '../../entities/import-export.ts';
import { checkImportExportRateLimit } from '../../import-export-rate-limit.ts';
import { route } from '../../route.ts';
import { contentDisposition } from '../../content-disposition.ts';

const MiB = 1024 * 1024;
/** Whatever max_import_size says (0: no limit there), an uploaded archive is at most this. */
const HARD_MAX_IMPORT_BYTES = 5 * 1024 * MiB;

const accepted = Type.Object({ message: Type.String() });
const binary = { description: 'the archive', content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } } };
const idParams = defineParams({ id: P.string({ description: 'project or group id or URL-encoded full path' }) });
const exportParams = defineParams({
  id: P.string({ description: 'project id or URL-encoded full path' }),
  description: P.optional(P.string({ maxLength: 2000, description: "overrides the project's description in the archive" })),
  upload: P.optional(P.hash({ description: '`upload[url]` to send the archive to once made, `upload[http_method]` PUT or POST' })),
});
const remoteParams = defineParams({
  url: P.string({ maxLength: 2048, description: 'https URL of the archive' }),
  path: P.name({ description: 'the new project path' }),
  name: P.optional(P.name()),
  namespace: P.optional(P.name({ description: 'id or full path of the namespace (default: the caller\'s)' })),
  overwrite: P.optional(P.boolean()),
  override_params: P.optional(P.hash()),
});

const s3Params = defineParams({
  region: P.string({ maxLength: 32, description: 'AWS region of the bucket' }),
  bucket_name: P.string({ maxLength: 63, description: 'the bucket' }),
  file_key: P.string({ maxLength: 1024, description: 'the key of the archive in the bucket' }),
  access_key_id: P.string({ maxLength: 128 }),
  secret_access_key: P.string({ maxLength: 128 }),
  path: P.name({ description: 'the new project path' }),
  name: P.optional(P.name()),
  namespace: P.optional(P.name({ description: 'id or full path of the namespace (default: the caller\'s)' })),
  overwrite: P.optional(P.boolean()),
  override_params: P.optional(P.hash()),
});

/** A boolean form value as Grape reads one ("true"/"false", any case, 1/0). */
function formBoolean(name: string, v: string | undefined): boolean | undefined {
  if (v === undefined || v === '') return undefined;
  if (/^(true|t|1|yes)$/i.test(v)) return true;
  if (/^(false|f|0|no)$/i.test(v)) return false;
  throw invalidParams([`${name} is invalid`]);
}

function fieldText(name: string, v: string | undefined, max: number): string | undefined {
  if (v === undefined) return undefined;
  if (v.length > max || v.includes('\0')) throw invalidParams([`${name} is invalid`]);
  return v;
}

/** `override_params`: the project attributes an import may set over the archive's (description and visibility here). */
function overrides(fields: Map<string, string>, hash?: Record<string, unknown>): Record<string, unknown> {
  const get = (k: string) => fields.get(`override_params[${k}]`) ?? (typeof hash?.[k] === 'string' ? hash[k] as string : undefined);
  const out: Record<string, unknown> = {};
  const description = fieldText('override_params[description]', get('description'), 2000);
  if (description !== undefined) out.description = description;
  const visibility = get('visibility');
  if (visibility !== undefined) {
    if (!(VISIBILITIES as readonly string[]).includes(visibility)) {
      throw invalidParams(['override_params[visibility] does not have a valid value']);
    }
    out.visibility_level = visibilityLevel(visibility as (typeof VISIBILITIES)[number]);
  }
  return out;
}

const importExport: FastifyPluginAsync = async (app) => {
  const { db, config } = app.kiln;

  /** Who may create a project in `namespace` (Projects::CreateService#allowed_namespace?), with the personal project limit. */
  async function checkProjectTarget(user: UserRow, namespace: NamespaceRow): Promise<void> {
    let allowed = user.admin === 1;
    if (!allowed && namespace.kind === 'user') allowed = namespace.owner_id === user.id;
    if (!allowed && namespace.kind === 'group') {
      const lineage = (await namespacePaths(db, [namespace])).get(namespace.id)!.lineage;
      allowed = canOnGroup(await groupActor(db, user, lineage), 'create_projects', namespace);
    }
    if (!allowed) throw badRequestMessage('Namespace is not valid');
    if (namespace.kind === 'user' && namespace.owner_id === user.id && user.admin !== 1) {
      if (user.projects_limit === 0 || await countProjectsInNamespace(db, namespace.id) >= user.projects_limit) {
        throw badRequestMessage(user.projects_limit === 0
          ? 'Personal project creation is not allowed. Please contact your administrator with questions'
          : `Your project limit is ${user.projects_limit} projects! Please contact your administrator to increase it`);
      }
    }
  }

  async function importProject(
    request: FastifyRequest, user: UserRow,
    o: { path: string; name?: string; namespace?: string; overwrite: boolean; overrides: Record<string, unknown>; file: Buffer },
  ) {
    const namespace = o.namespace ? await findNamespaceByIdOrPath(db, o.namespace) : await findUserNamespace(db, user.id);
    if (!namespace) throw notFound('Namespace');
    await checkProjectTarget(user, namespace);
    const paths = (await namespacePaths(db, [namespace])).get(namespace.id)!;
    const result = await requestProjectImport(db, app.jobs, config.storages, config.dataDir, {
      creator: user, namespace, namespaceFullPath: paths.fullPath, name: o.name ?? o.path, path: o.path, overwrite: o.overwrite,
      overrides: o.overrides, file: o.file,
    });
    if (!result.ok) {
      const [field, messages] = Object.entries(result.errors)[0];
      const label = field === 'base' ? '' : `${field.charAt(0).toUpperCase()}${field.slice(1).replace(/_/g, ' ')} `;
      throw badRequestMessage(`${label}${messages[0]}`);
    }
    void request;
    return presentImportStatus(result.project, paths);
  }

  /**
   * POST /projects/remote-import and …/remote-import-s3: behind their feature flag and the
   * project_import rate limit, the archive `fetch` reads (within max_import_size, through the
   * address guard) imported as an uploaded one.
   */
  async function importRemote(
    request: FastifyRequest, user: UserRow,
    input: { path: string; name?: string; namespace?: string; overwrite?: boolean; override_params?: unknown },
    flag: string, fetch: (limit: number, allowLocal: boolean) => Promise<Buffer>,
  ) {
    await checkImportSource();
    if (!await featureEnabled(db, flag)) throw notFound();
    await checkImportExportRateLimit(request, 'project_import', `user:${user.id}`);
    const settings = await currentSettings(db);
    const file = await fetch(await importLimit(), settings.allow_local_requests_from_web_hooks_and_services);
    return importProject(request, user, {
      path: input.path, name: input.name, namespace: input.namespace, overwrite: input.overwrite ?? false,
      overrides: overrides(new Map(), input.override_params as Record<string, unknown> | undefined), file,
    });
  }

  /** Reads a multipart body: its fields and the `file` part, at most `limit` bytes. */
  async function readForm(request: FastifyRequest, limit: number): Promise<{ fields: Map<string, string>; file: Buffer | null }> {
    const fields = new Map<string, string>();
    let file: Buffer | null = null;
    if (!isMultipart(request)) return { fields, file };
    for await (const part of multipartParts(request.raw, request.headers, { fileSize: limit, files: 2, fields: 100 })) {
      if (part.type === 'field') {
        fields.set(part.fieldname, part.value);
        continue;
      }
      if (part.fieldname !== 'file' || file) {
        part.file.resume();
        continue;
      }
      const chunks: Buffer[] = [];
      for await (const chunk of part.file) chunks.push(chunk as Buffer);
      if (part.file.truncated) {
        throw new ApiError(413,
          { message: `413 Request Entity Too Large: the archive is larger than the maximum import size (${Math.round(limit / MiB)} MB)` });
      }
      file = Buffer.concat(chunks);
    }
    return { fields, file };
  }

  async function importLimit(): Promise<number> {
    const mb = (await currentSettings(db)).max_import_size;
    return mb > 0 ? Math.min(mb * MiB, HARD_MAX_IMPORT_BYTES) : HARD_MAX_IMPORT_BYTES;
  }

  async function checkImportSource(): Promise<void> {
    // The Service's `before { forbidden! unless import_sources.include?('gitlab_project') }`.
    if (!(await currentSettings(db)).import_sources.includes('gitlab_project')) throw forbidden();
  }

  // ---- project export -------------------------------------------------------------------------

  route(app, {
    method: 'POST', url: '/projects/:id/export', auth: 'required', params: exportParams,
    schema: { summary: 'Start a new export of a project (made in the background)', tags: ['projects'], response: { 202: accepted } },
  }, async ({ request, reply, input, caller }) => {
    const ctx = await loadProject(request, input.id);
    authorizeProject(ctx, 'admin_project');
    await checkImportExportRateLimit(request, 'project_export', `user:${caller.user.id}`);
    let uploadUrl: string | null = null;
    let uploadMethod: string | null = null;
    const upload = input.upload as Record<string, unknown> | undefined;
    if (upload && upload.url !== undefined && upload.url !== '') {
      if (typeof upload.url !== 'string' || upload.url.length > 2048) throw invalidParams(['upload[url] is invalid']);
      const method = upload.http_method === undefined ? 'PUT' : String(upload.http_method).toUpperCase();
      if (method !== 'PUT' && method !== 'POST') throw invalidParams(['upload[http_method] does not have a valid value']);
      const settings = await currentSettings(db);
      const problem = urlProblem(upload.url, settings.allow_local_requests_from_web_hooks_and_services);
      if (problem) throw validationFailed({ url: [problem === 'is not a valid URL'
        ? 'is blocked: URI is invalid' : `is blocked: ${problem}`] });
      uploadUrl = upload.url;
      uploadMethod = method;
    }
    await requestProjectExport(db, app.jobs, {
      projectId: ctx.project.id, userId: caller.user.id, description: input.description ?? null, uploadUrl, uploadMethod,
    });
    reply.code(202);
    return { message: '202 Accepted' };
  });

  route(app, {
    method: 'GET', url: '/projects/:id/export', auth: 'required', params: idParams,
    schema: { summary: "A project's export status", tags: ['projects'], response: { 200: ProjectExportStatusSchema } },
  }, async ({ request, input }) => {
    const ctx = await loadProject(request, input.id);
    authorizeProject(ctx, 'admin_project');
    const row = await findProjectExport(db, ctx.project.id);
    const file = row ? await exportFile(config.dataDir, row.file_name) : null;
    let status = 'none';
    if (row?.status === 'queued' || row?.status === 'started') status = file ? 'regeneration_in_progress' : row.status;
    else if (row?.status === 'finished' && file) status = 'finished';
    return presentExportStatus(ctx.project, ctx.namespace, status, config.externalUrl);
  });

  route(app, {
    method: 'GET', url: '/projects/:id/export/download', auth: 'required', params: idParams,
    schema: { summary: "Download a project's finished export", tags: ['projects'], produces: ['application/octet-stream'],
      response: { 200: binary } },
  }, async ({ request, reply, input, caller }) => {
    const ctx = await loadProject(request, input.id);
    authorizeProject(ctx, 'admin_project');
    await checkImportExportRateLimit(request, 'project_download_export', `user:${caller.user.id}:project:${ctx.project.id}`);
    const row = await findProjectExport(db, ctx.project.id);
    const file = row?.status === 'finished' ? await exportFile(config.dataDir, row.file_name) : null;
    if (!file) throw new ApiError(404, { message: '404 Not found or has expired' });
    const name = exportArchiveName(`${ctx.namespace.fullPath}/${ctx.project.path}`);
    reply.header('content-disposition', contentDisposition('attachment', name));
    reply.header('content-length', String(file.size));
    reply.type('application/octet-stream');
    return reply.send(fs.createReadStream(file.path));
  });

  // ---- project import -------------------------------------------------------------------------

  route(app, {
    method: 'POST', url: '/projects/import', auth: 'required', multipart: 'stream',
    schema: {
      summary: 'Import a project from an export archive (multipart `file`, `path`, `name`, `namespace`, `overwrite`, `override_params`)',
      tags: ['projects'], response: { 201: ProjectImportStatusSchema },
    },
  }, async ({ request, reply, caller }) => {
    await checkImportSource();
    await checkImportExportRateLimit(request, 'project_import', `user:${caller.user.id}`);
    const { fields, file } = await readForm(request, await importLimit());
    const path = fieldText('path', fields.get('path'), 255);
    if (!path) throw missingAttribute('path');
    if (!file) throw missingAttribute('file');
    const body = await importProject(request, caller.user, {
      path, name: fieldText('name', fields.get('name'), 255), namespace: fieldText('namespace', fields.get('namespace'), 255),
      overwrite: formBoolean('overwrite', fields.get('overwrite')) ?? false, overrides: overrides(fields), file,
    });
    reply.code(201);
    return body;
  });

  route(app, {
    method: 'POST', url: '/projects/remote-import', auth: 'required', params: remoteParams,
    schema: {
      summary: 'Import a project from an export archive at an https URL (behind the import_project_from_remote_file flag)',
      tags: ['projects'], response: { 201: ProjectImportStatusSchema },
    },
  }, async ({ request, reply, input, caller }) => {
    const body = await importRemote(request, caller.user, input, 'import_project_from_remote_file', async (limit, allowLocal) => {
      // RemoteFile's `validates :file_url, addressable_url: { schemes: %w(https) }`, then the address guard.
      let url: URL;
      try {
        url = new URL(input.url);
      } catch {
        throw badRequestMessage('File url is blocked: URI is invalid');
      }
      if (url.protocol !== 'https:') throw badRequestMessage('File url is blocked: Only allowed schemes are https');
      const problem = urlProblem(input.url, allowLocal);
      if (problem) throw badRequestMessage(`File url is blocked: ${problem}`);
      return fetchArchive(input.url, limit, allowLocal);
    });
    reply.code(201);
    return body;
  });

  route(app, {
    method: 'POST', url: '/projects/remote-import-s3', auth: 'required', params: s3Params,
    schema: {
      summary: 'Import a project from an export archive in an S3 bucket (behind the import_project_from_remote_file_s3 flag)',
      tags: ['projects'], response: { 201: ProjectImportStatusSchema },
    },
  }, async ({ request, reply, input, caller }) => {
    const body = await importRemote(request, caller.user, input, 'import_project_from_remote_file_s3', async (limit, allowLocal) => {
      // Names S3 accepts only, so that the host the presigned URL names is the bucket's.
      if (!/^[a-z0-9-]{1,32}$/.test(input.region)) throw invalidParams(['region is invalid']);
      if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(input.bucket_name)) throw invalidParams(['bucket_name is invalid']);
      const url = presignedGetUrl({
        region: input.region, bucket: input.bucket_name, key: input.file_key, accessKeyId: input.access_key_id,
        secretAccessKey: input.secret_access_key,
      });
      // RemoteFileS3#file_exists: any failure to read the object is the Service's one message.
      return fetchArchive(url, limit, allowLocal).catch((err: unknown) => {
        const reason = err instanceof ApiError ? String((err.body as { message?: unknown }).message ?? '') : '';
        throw badRequestMessage(`Failed to open '${input.file_key}' in '${input.bucket_name}'${reason ? `: ${reason}` : ''}`);
      });
    });
    reply.code(201);
    return body;
  });

  route(app, {
    method: 'GET', url: '/projects/:id/import', auth: 'required', params: idParams,
    schema: { summary: "A project's import status", tags: ['projects'], response: { 200: ProjectImportStatusSchema } },
  }, async ({ request, input }) => {
    const ctx = await loadProject(request, input.id);
    const project = (await findProjectById(db, ctx.project.id)) ?? ctx.project;
    return presentImportStatus(project, ctx.namespace);
  });

  // ---- groups ---------------------------------------------------------------------------------

  route(app, {
    method: 'POST', url: '/groups/:id/export', auth: 'required', params: idParams,
    schema: { summary: 'Start a new export of a group (made in the background)', tags: ['groups'], response: { 202: accepted } },
  }, async ({ request, reply, input, caller }) => {
    const ctx = await loadGroup(request, input.id);
    authorizeGroup(ctx, 'admin_group');
    await checkImportExportRateLimit(request, 'group_export', `user:${caller.user.id}`);
    await requestGroupExport(db, app.jobs, ctx.group.id, caller.user.id);
    reply.code(202);
    return { message: '202 Accepted' };
  });

  route(app, {
    method: 'GET', url: '/groups/:id/export/download', auth: 'required', params: idParams,
    schema: { summary: "Download a group's finished export", tags: ['groups'], produces: ['application/octet-stream'],
      response: { 200: binary } },
  }, async ({ request, reply, input, caller }) => {
    const ctx = await loadGroup(request, input.id);
    authorizeGroup(ctx, 'admin_group');
    await checkImportExportRateLimit(request, 'group_download_export', `user:${caller.user.id}:group:${ctx.group.id}`);
    const row = await findGroupExport(db, ctx.group.id);
    const file = row?.status === 'finished' ? await exportFile(config.dataDir, row.file_name) : null;
    if (!file) throw new ApiError(404, { message: '404 Not found or has expired' });
    reply.header('content-disposition', contentDisposition('attachment', exportArchiveName(ctx.fullPath)));
    reply.header('content-length', String(file.size));
    reply.type('application/octet-stream');
    return reply.send(fs.createReadStream(file.path));
  });

  route(app, {
    method: 'POST', url: '/groups/import', auth: 'required', multipart: 'stream',
    schema: {
      summary: 'Import a group from an export archive (multipart `file`, `name`, `path`, `parent_id`)', tags: ['groups'],
      response: { 202: accepted },
    },
  }, async ({ request, reply, caller }) => {
    await checkImportSource();
    await checkImportExportRateLimit(request, 'group_import', `user:${caller.user.id}`);
    const { fields, file } = await readForm(request, await importLimit());
    const path = fieldText('path', fields.get('path'), 255);
    const name = fieldText('name', fields.get('name'), 255);
    if (!path) throw missingAttribute('path');
    if (!name) throw missingAttribute('name');
    if (!file) throw missingAttribute('file');
    const parentText = fields.get('parent_id');
    let parent: { row: NamespaceRow; fullPath: string } | null = null;
    if (parentText !== undefined && parentText !== '') {
      if (!/^\d{1,10}$/.test(parentText) || Number(parentText) > 2147483647) throw invalidParams(['parent_id is invalid']);
      const row = await findNamespaceByIdOrPath(db, parentText);
      if (!row || row.kind !== 'group') throw notFound('Group');
      const paths = (await namespacePaths(db, [row])).get(row.id)!;
      // find_group! first: a parent the caller may not see is not found.
      const actor = await groupActor(db, caller.user, paths.lineage);
      if (!canOnGroup(actor, 'read_group', row)) throw notFound('Group');
      if (!canOnGroup(actor, 'create_subgroup', row)) throw forbidden();
      parent = { row, fullPath: paths.fullPath };
    } else if (!canCreateTopLevelGroup(caller.user)) {
      throw forbidden();
    }
    const created = await createGroup(db, config.storages, {
      creator: caller.user, name, path, description: '', visibilityLevel: parent ? Math.min(parent.row.visibility_level, 0) : 0, parent,
    });
    if (!created.ok) {
      const [field, messages] = Object.entries(created.errors)[0];
      throw badRequestMessage(`${field.charAt(0).toUpperCase()}${field.slice(1).replace(/_/g, ' ')} ${messages[0]}`);
    }
    const fileName = await storeImportFile(config.dataDir, file);
    await queueGroupImport(app.jobs, { groupId: created.group.id, userId: caller.user.id, file: fileName });
    reply.code(202);
    return { message: '202 Accepted' };
  });
};

/** GETs the archive at `url` (no redirect followed), at most `limit` bytes, addresses checked as the connection resolves them. */
function fetchArchive(url: string, limit: number, allowLocal: boolean): Promise<Buffer> {
  const target = checkDeliveryUrl(url, allowLocal);
  const client = target.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const fail = (message: string) => reject(badRequestMessage(message));
    const req = client.get(target, { lookup: guardedLookup(allowLocal), timeout: 30_000 }, (res) => {
      if ((res.statusCode ?? 500) >= 300) {
        res.resume();
        fail(`Failed to download the file: the server answered ${res.statusCode}`);
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > limit) {
          req.destroy();
          fail(`File size exceeds the maximum import size (${Math.round(limit / MiB)} MB)`);
          return;
        }
        chunks.push(chunk);
      });
      res.on('end', () => resolve(Buffer.concat(chunks)));
      res.on('error', (err) => fail(`Failed to download the file: ${err.message}`));
    });
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', (err) => fail(`Failed to download the file: ${err.message}`));
  });
}

export default importExport;
