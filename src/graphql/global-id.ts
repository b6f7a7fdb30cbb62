/**
 * Global ids as the Service puts them on the wire: `gid://gitlab/<Model>/<id>`, the model being
 * the Service's own class name (`Ci::Build`, `Ci::Pipeline`, `Namespaces::UserNamespace`…), so
 * ids copied from the Service's documentation and clients parse unchanged.
 */
import { GraphQLError, GraphQLScalarType, Kind } from 'graphql';

const PREFIX = 'gid://gitlab/';
/** The largest id kiln stores: ids past a 32-bit integer are refused before any query. */
const MAX_ID = 2 ** 31 - 1;

export function toGid(model: string, id: number): string {
  return `${PREFIX}${model}/${id}`;
}

export interface ParsedGid { model: string; id: number }

/** `null` when the text is not a global id with a numeric id that kiln could store. */
export function parseGid(value: string): ParsedGid | null {
  if (typeof value !== 'string' || value.length > 255 || !value.startsWith(PREFIX)) return null;
  const m = /^([A-Za-z][A-Za-z0-9]*(?:::[A-Za-z][A-Za-z0-9]*)*)\/([0-9]{1,10})$/.exec(value.slice(PREFIX.length));
  if (!m) return null;
  const id = Number(m[2]);
  return id >= 1 && id <= MAX_ID ? { model: m[1]!, id } : null;
}

/**
 * A typed global id scalar (the Service's `GlobalIDType[Model]`): accepts ids of the listed models
 * and answers the Service's coercion messages otherwise. Resolvers receive the parsed id.
 */
export function globalIdScalar(name: string, models: string[], description: string): GraphQLScalarType<ParsedGid, string> {
  const coerce = (value: unknown): ParsedGid => {
    const text = typeof value === 'string' ? value : JSON.stringify(value);
    const gid = typeof value === 'string' ? parseGid(value) : null;
    if (!gid) throw new GraphQLError(`${JSON.stringify(text)} is not a valid Global ID`);
    if (!models.includes(gid.model)) throw new GraphQLError(`${JSON.stringify(text)} does not represent an instance of ${models[0]}`);
    return gid;
  };
  return new GraphQLScalarType<ParsedGid, string>({
    name,
    description,
    serialize: (v) => String(v),
    parseValue: coerce,
    parseLiteral: (ast) => {
      if (ast.kind !== Kind.STRING) throw new GraphQLError(`${name} must be a string`);
      return coerce(ast.value);
    },
  });
}

export const MODELS = {
  user: 'User',
  project: 'Project',
  group: 'Group',
  userNamespace: 'Namespaces::UserNamespace',
  pipeline: 'Ci::Pipeline',
  build: 'Ci::Build',
  bridge: 'Ci::Bridge',
  runner: 'Ci::Runner',
  email: 'Email',
  groupMember: 'GroupMember',
  projectMember: 'ProjectMember',
} as const;

/** Jobs are addressed as `Ci::Build` (or `Ci::Bridge`); the Service's `JobID` also takes their parent class. */
export const JOB_MODELS = ['CommitStatus', MODELS.build, MODELS.bridge, 'Ci::Processable'];

export const scalars = {
  UserID: globalIdScalar('UserID', [MODELS.user], 'A `UserID` is a global ID, e.g. "gid://gitlab/User/1".'),
  CiPipelineID: globalIdScalar('CiPipelineID', [MODELS.pipeline], 'A `CiPipelineID` is a global ID, e.g. "gid://gitlab/Ci::Pipeline/1".'),
  JobID: globalIdScalar('JobID', JOB_MODELS, 'A `JobID` is a global ID, e.g. "gid://gitlab/CommitStatus/1".'),
  CiBuildID: globalIdScalar('CiBuildID', [MODELS.build], 'A `CiBuildID` is a global ID, e.g. "gid://gitlab/Ci::Build/1".'),
  CiRunnerID: globalIdScalar('CiRunnerID', [MODELS.runner], 'A `CiRunnerID` is a global ID, e.g. "gid://gitlab/Ci::Runner/1".'),
};
