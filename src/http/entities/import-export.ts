/** ProjectExportStatus and ProjectImportStatus (lib/api/entities 15.2): a project's identity with its export or import state. */
import { Type, type Static } from 'typebox';
import type { ProjectRow } from '../../db/tables/projects.ts';

const ProjectIdentity = {
  id: Type.Integer(),
  description: Type.Union([Type.String(), Type.Null()]),
  name: Type.String(),
  name_with_namespace: Type.String(),
  path: Type.String(),
  path_with_namespace: Type.String(),
  created_at: Type.String(),
};

export const ProjectExportStatusSchema = Type.Object({
  ...ProjectIdentity,
  export_status: Type.String(),
  _links: Type.Optional(Type.Object({ api_url: Type.String(), web_url: Type.String() })),
});

export const ProjectImportStatusSchema = Type.Object({
  ...ProjectIdentity,
  import_status: Type.String(),
  import_type: Type.Union([Type.String(), Type.Null()]),
  correlation_id: Type.Union([Type.String(), Type.Null()]),
  failed_relations: Type.Array(Type.Object({
    id: Type.Integer(), created_at: Type.String(), exception_class: Type.String(), exception_message: Type.String(),
    source: Type.String(), relation_name: Type.String(),
  })),
  import_error: Type.Union([Type.String(), Type.Null()]),
});

interface Place { fullPath: string; fullName: string }

function identity(p: ProjectRow, ns: Place) {
  return {
    id: p.id, description: p.description, name: p.name, name_with_namespace: `${ns.fullName} / ${p.name}`, path: p.path,
    path_with_namespace: `${ns.fullPath}/${p.path}`, created_at: p.created_at,
  };
}

export function presentExportStatus(p: ProjectRow, ns: Place, status: string,
  externalUrl: string): Static<typeof ProjectExportStatusSchema> {
  const body: Static<typeof ProjectExportStatusSchema> = { ...identity(p, ns), export_status: status };
  // The links only once there is a file to download (ProjectExportStatus: `if: export_finished?`).
  if (status === 'finished') {
    body._links = {
      api_url: `${externalUrl}/api/v4/projects/${p.id}/export/download`,
      web_url: `${externalUrl}/${ns.fullPath}/${p.path}/download_export`,
    };
  }
  return body;
}

export function presentImportStatus(p: ProjectRow, ns: Place): Static<typeof ProjectImportStatusSchema> {
  return {
    ...identity(p, ns), import_status: p.import_status, import_type: p.import_type, correlation_id: null, failed_relations: [],
    import_error: p.import_error,
  };
}
