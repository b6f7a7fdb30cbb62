/**
 * How an issue is named from somewhere else (Issue#to_reference with Project#to_reference_base
 * of the Service 15.2): `#3` within its own project, `project#3` from another project of the
 * same namespace, `group/project#3` from anywhere else. System notes name issues this way.
 */
export interface ProjectRef {
  id: number;
  namespaceId: number;
  /** The project's own path (its last segment). */
  path: string;
  /** `group/subgroup/project`. */
  fullPath: string;
}

export function issueReference(iid: number, project: ProjectRef, from: Pick<ProjectRef, 'id' | 'namespaceId'>): string {
  if (project.id === from.id) return `#${iid}`;
  if (project.namespaceId === from.namespaceId) return `${project.path}#${iid}`;
  return `${project.fullPath}#${iid}`;
}
