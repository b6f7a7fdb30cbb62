/**
 * Configurations the loader refuses, each with the exact message the API answers (CI lint's
 * `errors`, pipeline creation's `{"message":{"base":[…]}}`), grouped by the file that words the
 * message. errors.test.ts runs them all and checks that every message written in
 * src/domain/ci-config is expected by at least one of them.
 */
import { MAX_BYTES } from '../../../src/domain/ci-config/load-yaml.ts';
import { MEMORY_FQDN, type Pipeline, type World } from './memory.ts';

export interface ErrorCase {
  yaml: string;
  error: string;
  world?: World;
  /** Given: the pipeline is also selected (selectJobs), as pipeline creation does. */
  pipeline?: Pipeline;
}

const c = (yaml: string, error: string, o: Omit<ErrorCase, 'yaml' | 'error'> = {}): ErrorCase => ({ yaml, error, ...o });
/** One job `job` with a script and these other keys (flow style). */
const job = (keys: string, error: string, o: Omit<ErrorCase, 'yaml' | 'error'> = {}) => c(`job: { script: x, ${keys} }\n`, error, o);
const many = (n: number, line: (i: number) => string) => Array.from({ length: n }, (_, i) => line(i)).join('\n');
const OK = 'job: { script: x }\n';

/** Ten aliases of ten aliases …: 10^10 nodes once expanded. */
const aliasBomb = [
  'a: &a [x, x, x, x, x, x, x, x, x, x]',
  ...Array.from({ length: 9 }, (_, i) => {
    const prev = String.fromCharCode(97 + i);
    return `${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [${Array(10).fill(`*${prev}`).join(', ')}]`;
  }),
  OK,
].join('\n');

/** Seven levels of ten references each: ten million nodes once resolved. */
const referenceBomb = [
  '.l0: [x, x, x, x, x, x, x, x, x, x]',
  ...Array.from({ length: 7 }, (_, i) => `.l${i + 1}: [${Array(10).fill(`!reference [.l${i}]`).join(', ')}]`),
  OK,
].join('\n');

export const YAML_ERRORS: ErrorCase[] = [
  c(`# ${'x'.repeat(MAX_BYTES)}\n${OK}`, 'The parsed YAML is too big'),
  c(aliasBomb, 'The parsed YAML is too big'),
  c(`deep: ${'['.repeat(101)}${']'.repeat(101)}\n${OK}`, 'The parsed YAML is too big'),
  c('job: { script: !reference x }\n', '!reference should be an array of strings'),
  c('job: { script: !reference [[a], b] }\n', '!reference should be an array of strings'),
  c('job:\n  <<: 1\n  script: x\n', 'Merge sources must be maps or map aliases'),
  c('job:\n  <<: [[a]]\n  script: x\n', 'Merge sources must be maps or map aliases'),
  // The parser's own words, first line only.
  c('job: [\n', 'Flow sequence in block collection must be sufficiently indented and end with a ]'),
  c('job: { script: x\n', 'Flow map in block collection must be sufficiently indented and end with a }'),
  c('job:\n  script: x\n   bad: y\n', 'Nested mappings are not allowed in compact mappings'),
  c('job: { script: "\\d+" }\n', 'Invalid escape sequence \\d'),
  c('a: "open\n', 'Missing closing "quote'),
];

export const ROOT_ERRORS: ErrorCase[] = [
  c('', 'Invalid configuration format'),
  c('- job\n', 'Invalid configuration format'),
  c('just text\n', 'Invalid configuration format'),
  c('job: x\n', 'jobs:job config should be a hash'),
  c('job: [x]\n', 'jobs:job config should be a hash'),
  c('.hidden: { script: x }\n', 'jobs config should contain at least one visible job'),
  c('variables: { A: "1" }\n', 'jobs config should contain at least one visible job'),
  c(`stages: build\n${OK}`, 'stages config should be an array of strings'),
  c(`stages: [build, 1]\n${OK}`, 'stages config should be an array of strings'),
  c(`types: {a: 1}\n${OK}`, 'stages config should be an array of strings'),
  c(`variables: x\n${OK}`, 'variables config should be a hash of key value pairs, value can be a hash'),
  c(`variables: { A: [1] }\n${OK}`, 'variables config should be a hash of key value pairs, value can be a hash'),
  c(`variables: { A: { value: [1] } }\n${OK}`, 'variables config should be a hash of key value pairs, value can be a hash'),
  c(`workflow: x\n${OK}`, 'workflow config should be a hash'),
  c(`workflow: { when: always }\n${OK}`, 'workflow config contains unknown keys: when'),
  c(`workflow: { rules: x }\n${OK}`, 'workflow rules should be an array of hashes'),
  c(`workflow: { rules: [{ when: manual }] }\n${OK}`, 'workflow:rules:rule when unknown value: manual'),
  c(`workflow: { rules: [{ if: "$A ==" }] }\n${OK}`, 'workflow:rules:rule if invalid expression syntax'),
  c(many(2001, (i) => `j${i}: { script: x }`),
    'The number of jobs has exceeded the limit of 2000. Try splitting the configuration with parent-child-pipelines.'),
  c(many(11, (i) => `j${i}: { script: x, parallel: 200 }`),
    'The number of jobs has exceeded the limit of 2000. Try splitting the configuration with parent-child-pipelines.'),
];

export const DEFAULT_ERRORS: ErrorCase[] = [
  c(`default: x\n${OK}`, 'default config should be a hash'),
  c(`default: [x]\n${OK}`, 'default config should be a hash'),
  c(`default: { script: x, stage: y }\n${OK}`, 'default config contains unknown keys: script, stage'),
  c(`default: { interruptible: yes please }\n${OK}`, 'default:interruptible config should be a boolean value'),
  c(`default: { before_script: { a: 1 } }\n${OK}`,
    'default before_script should be a string or a nested array of strings up to 10 levels deep'),
  c(`after_script: [{ a: 1 }]\n${OK}`, 'default after_script should be a string or a nested array of strings up to 10 levels deep'),
  c(`default: { image: 1 }\n${OK}`, 'default:image config should be a hash or a string'),
  c(`image: [a]\n${OK}`, 'default:image config should be a hash or a string'),
  c(`default: { services: x }\n${OK}`, 'default:services config should be a array'),
  c(`default: { cache: x }\n${OK}`, 'default:cache config should be a hash'),
  c(`default: { retry: 3 }\n${OK}`, 'default:retry config must be between 0 and 2'),
  // default:tags, artifacts and timeout are checked as a job named `default` would be.
  c(`default: { tags: x }\n${OK}`, 'jobs:default tags should be an array of strings'),
  c(`default: { timeout: soon }\n${OK}`, 'jobs:default timeout should be a duration'),
  c(`default: { artifacts: x }\n${OK}`, 'jobs:default:artifacts config should be a hash'),
];

export const JOB_ERRORS: ErrorCase[] = [
  job('scriptt: x, foo: 1', 'jobs:job config contains unknown keys: scriptt, foo'),
  c('job: { trigger: a/b, script: x }\n', 'jobs:job config contains unknown keys: script'),
  c('job: { stage: test }\n', 'jobs:job config should implement a script: or a trigger: keyword'),
  c('job: { script: null }\n', 'jobs:job config should implement a script: or a trigger: keyword'),
  job('rules: [{ when: always }], only: [main], except: [x], start_in: 1h',
    'jobs:job config key may not be used with `rules`: only, except, start_in'),
  job('stage: [a]', 'jobs:job stage should be a string'),
  job('stage: nope', 'job job: chosen stage does not exist; available stages are .pre, build, test, deploy, .post'),
  c('stages: [one]\njob: { script: x }\n', 'job job: chosen stage does not exist; available stages are .pre, one, .post'),
  job('type: nope', 'job job: chosen stage does not exist; available stages are .pre, build, test, deploy, .post'),
  job('when: later', 'jobs:job when should be one of: on_success, on_failure, always, manual, delayed'),
  job('when: [manual]', 'jobs:job when should be one of: on_success, on_failure, always, manual, delayed'),
  job('when: delayed', 'jobs:job start in should be a duration'),
  job('script: { a: 1 }', 'jobs:job script should be a string or a nested array of strings up to 10 levels deep'),
  job(`script: ${'['.repeat(12)}x${']'.repeat(12)}`,
    'jobs:job script should be a string or a nested array of strings up to 10 levels deep'),
  job('before_script: [{ a: 1 }]', 'jobs:job before_script should be a string or a nested array of strings up to 10 levels deep'),
  job('after_script: 1', 'jobs:job after_script should be a string or a nested array of strings up to 10 levels deep'),
  job('dependencies: x', 'jobs:job dependencies should be an array of strings'),
  job('dependencies: [1]', 'jobs:job dependencies should be an array of strings'),
  job('interruptible: 1', 'jobs:job interruptible config should be a boolean value'),
  job('resource_group: [a]', 'jobs:job resource group should be a string'),
  job('inherit: x', 'jobs:job:inherit config should be a hash'),
  job('inherit: { default: x }', 'jobs:job:inherit:default config should be a boolean value or an array of strings'),
  job('inherit: { variables: [1] }', 'jobs:job:inherit:variables config should be a boolean value or an array of strings'),
  job('inherit: { stages: true }', 'jobs:job:inherit config contains unknown keys: stages'),
  job('variables: x', 'jobs:job variables config should be a hash of key value pairs, value can be a hash'),
  job('variables: { A: { value: { b: 1 } } }', 'jobs:job variables config should be a hash of key value pairs, value can be a hash'),
  job('timeout: soon', 'jobs:job timeout should be a duration'),
  job('timeout: 0', 'jobs:job timeout should be a duration'),
  job('timeout: never', 'jobs:job timeout should be a duration'),
  job('timeout: [1h]', 'jobs:job timeout should be a duration'),
  job('tags: docker', 'jobs:job tags should be an array of strings'),
  job('tags: [1]', 'jobs:job tags should be an array of strings'),
];

export const RULES_ERRORS: ErrorCase[] = [
  job('rules: x', 'jobs:job rules should be an array of hashes'),
  job('rules: [x]', 'jobs:job:rules:rule config should be a hash'),
  job('rules: [{ iff: x, other: 1 }]', 'jobs:job:rules:rule config contains unknown keys: iff, other'),
  job('rules: [{ if: "$A = 1" }]', 'jobs:job:rules:rule if invalid expression syntax'),
  job('rules: [{ if: 1 }]', 'jobs:job:rules:rule if invalid expression syntax'),
  job(`rules: [{ if: '$A =~ /(/' }]`, 'jobs:job:rules:rule if invalid expression syntax'),
  job(`rules: [{ if: '$A == "${'x'.repeat(4100)}"' }]`, 'jobs:job:rules:rule if invalid expression syntax'),
  job('rules: [{ changes: 1 }]', 'jobs:job:rules:rule changes should be an array of strings'),
  job(`rules: [{ changes: [${many(51, (i) => `f${i}`).replace(/\n/g, ', ')}] }]`,
    'jobs:job:rules:rule changes has too many entries (maximum 50)'),
  job('rules: [{ changes: { paths: x } }]', 'jobs:job:rules:rule:changes paths should be an array of strings'),
  job('rules: [{ changes: { paths: [a], compare: main } }]', 'jobs:job:rules:rule:changes config contains unknown keys: compare'),
  job('rules: [{ changes: { paths: [a], compare_to: [main] } }]', 'jobs:job:rules:rule:changes compare to should be a string'),
  job('rules: [{ exists: { a: 1 } }]', 'jobs:job:rules:rule exists should be an array of strings'),
  job(`rules: [{ exists: [${many(51, (i) => `f${i}`).replace(/\n/g, ', ')}] }]`,
    'jobs:job:rules:rule exists has too many entries (maximum 50)'),
  job('rules: [{ when: sometimes }]', 'jobs:job:rules:rule when unknown value: sometimes'),
  job('rules: [{ allow_failure: maybe }]', 'jobs:job:rules:rule allow_failure should be a boolean value'),
  job('rules: [{ variables: [A] }]', 'jobs:job:rules:rule variables config should be a hash of key value pairs, value can be a hash'),
  // rules:needs are read as a job's needs with no job name.
  job('rules: [{ needs: x }]', 'jobs: needs config can only be a string, a hash or an array'),
];

export const ONLY_EXCEPT_ERRORS: ErrorCase[] = [
  job('only: [1]', 'jobs:job:only config should be an array of strings or regular expressions'),
  job('except: 1', 'jobs:job:except config should be an array or a hash'),
  job('only: { ref: [main] }', 'jobs:job:only config contains unknown keys: ref'),
  job('only: { refs: [{ a: 1 }] }', 'jobs:job:only refs should be an array of strings or regular expressions'),
  job('except: { variables: ["$A ="] }', 'jobs:job:except variables invalid expression syntax'),
  job('only: { variables: [1] }', 'jobs:job:only variables invalid expression syntax'),
  job('only: { changes: [{ a: 1 }] }', 'jobs:job:only changes should be an array of strings'),
  job('only: { kubernetes: passive }', 'jobs:job:only kubernetes unknown value: passive'),
];

export const KEYWORD_ERRORS: ErrorCase[] = [
  job('image: 1', 'jobs:job:image config should be a hash or a string'),
  job('image: { entrypoint: [a] }', 'jobs:job:image config should be a hash or a string'),
  job('image: { name: a, alias: b }', 'jobs:job:image config contains unknown keys: alias'),
  // image:docker (after 15.2), checked against the executor_opts schema.
  job('image: { name: a, docker: { user: 1 } }', "jobs:job:image executor opts '/docker/user' must be a valid 'string'"),
  job('image: { name: a, docker: { uid: x } }', "jobs:job:image executor opts '/docker/uid' must be a valid 'schema'"),
  job('image: { name: a, docker: root }', "jobs:job:image executor opts '/docker' must be a valid 'object'"),
  job('image: { name: a, docker: { user: "" } }', "jobs:job:image executor opts '/docker/user' must be a valid 'minLength'"),
  job(`image: { name: a, docker: { platform: ${'p'.repeat(65)} } }`, "jobs:job:image executor opts '/docker/platform' must be a valid 'maxLength'"),
  job('image: { name: a, entrypoint: { a: 1 } }', 'jobs:job:image entrypoint should be an array of strings'),
  job('image: { name: a, pull_policy: sometimes }', 'jobs:job:image pull_policy should be one of: always, if-not-present, never'),
  job('image: { name: a, pull_policy: [] }', 'jobs:job:image pull_policy should be one of: always, if-not-present, never'),
  job('image: { name: a, ports: 80 }', 'jobs:job:image:ports config should be an array of strings or a hash'),
  job('image: { name: a, ports: ["80"] }', 'jobs:job:image:ports config should be an array of strings or a hash'),
  job('services: postgres', 'jobs:job:services config should be a array'),
  job('services: [1]', 'jobs:job:services:service config should be a hash or a string'),
  job('services: [{ alias: db }]', 'jobs:job:services:0 config should be a hash or a string'),
  job('services: [a, { name: b, foo: 1 }]', 'jobs:job:services:1 config contains unknown keys: foo'),
  job('services: [{ name: b, alias: [x] }]', 'jobs:job:services:service alias should be a string'),
  job('services: [{ name: b, command: { a: 1 } }]', 'jobs:job:services:service command should be an array of strings'),
  job('services: [{ name: b, variables: [x] }]',
    'jobs:job:services:service variables config should be a hash of key value pairs, value can be a hash'),
  job('services: [{ name: b, ports: [{ protocol: http }] }]', 'jobs:job:services:0:ports config should be an array of strings or a hash'),
  job('cache: x', 'jobs:job:cache config should be a hash'),
  job('cache: [{ paths: [a] }, x]', 'jobs:job:cache config should be a hash'),
  job('cache: { path: [a] }', 'jobs:job:cache config contains unknown keys: path'),
  job('cache: [{}, {}, {}, {}, {}]', 'jobs:job:cache config no more than 4 caches can be created'),
  job('cache: { key: { files: [] } }', 'jobs:job:cache:key:files config has to be an array of one or two strings'),
  job('cache: { key: { files: [a, b, c] } }', 'jobs:job:cache:key:files config has to be an array of one or two strings'),
  job('cache: { key: [a] }', 'jobs:job:cache:key config should be a hash, a string or a symbol'),
  job('cache: { paths: { a: 1 } }', 'jobs:job:cache paths should be an array of strings'),
  job('cache: { policy: pull-only }', 'jobs:job:cache policy should be pull-push, push, or pull'),
  job('cache: { when: never }', 'jobs:job:cache when should be on_success, on_failure or always'),
  job('cache: { untracked: 1 }', 'jobs:job:cache untracked should be a boolean value'),
  job('retry: 3', 'jobs:job:retry config must be between 0 and 2'),
  job('retry: -1', 'jobs:job:retry config must be between 0 and 2'),
  job('retry: 1.5', 'jobs:job:retry config must be between 0 and 2'),
  job('retry: always', 'jobs:job:retry config should be a hash or an integer'),
  job('retry: { max: 1, exit: 1 }', 'jobs:job:retry config contains unknown keys: exit'),
  job('retry: { max: 5 }', 'jobs:job:retry max config must be between 0 and 2'),
  job('retry: { max: 1, when: 1 }', 'jobs:job:retry when should be an array of strings or a string'),
  job('retry: { max: 1, when: [always, bad_luck, cosmic_rays] }', 'jobs:job:retry when contains unknown values: bad_luck, cosmic_rays'),
  job('environment: 1', 'jobs:job:environment config should be a hash or a string'),
  job('environment: { url: x }', "jobs:job:environment name can't be blank"),
  job('environment: { name: "" }', "jobs:job:environment name can't be blank"),
  job('environment: { name: a, action: deploy }', 'jobs:job:environment action should be start, stop, prepare, verify, or access'),
  job('environment: { name: a, url: [x] }', 'jobs:job:environment url should be a string'),
  job('environment: { name: a, on_stop: 1 }', 'jobs:job:environment on stop should be a string'),
  job('environment: { name: a, auto_stop_in: 1 }', 'jobs:job:environment auto stop in should be a string'),
  job('environment: { name: a, deployment_tier: 1 }', 'jobs:job:environment deployment tier should be a string'),
  job('environment: { name: a, tier: prod }', 'jobs:job:environment config contains unknown keys: tier'),
  job('environment: { name: a, deployment_tier: live }', 'jobs:job:environment deployment tier must be one of production, staging, testing, development, other'),
  job('environment: /review', "jobs:job:environment name can contain only letters, digits, '-', '_', '/', '$', '{', '}', '.', and spaces, but it cannot start or end with '/'"),
  job('environment: { name: "review/*" }', "jobs:job:environment name can contain only letters, digits, '-', '_', '/', '$', '{', '}', '.', and spaces, but it cannot start or end with '/'"),
  job('release: x', 'jobs:job:release config should be a hash'),
  job('release: { tag_name: v1, description: d, title: t }', 'jobs:job:release config contains unknown keys: title'),
  job('release: { description: d }', "jobs:job:release tag name can't be blank"),
  job('release: { tag_name: v1 }', "jobs:job:release description can't be blank"),
  job("coverage: '\\d+%'", 'jobs:job:coverage config must be a regular expression'),
  job('coverage: 1', 'jobs:job:coverage config must be a regular expression'),
  job('allow_failure: { exit_codes: [] }', 'jobs:job:allow_failure exit codes should be an array of integers or an integer'),
  job('allow_failure: { exit_codes: [a] }', 'jobs:job:allow_failure exit codes should be an array of integers or an integer'),
  job('allow_failure: maybe', 'jobs:job:allow_failure config should be a hash or a boolean value'),
  job('allow_failure: { exit_codes: 1, other: 2 }', 'jobs:job:allow_failure config should be a hash or a boolean value'),
];

export const DETAIL_ERRORS: ErrorCase[] = [
  job('needs: build', 'jobs:job needs config can only be a string, a hash or an array'),
  job(`needs: [${many(51, (i) => `j${i}`).replace(/\n/g, ', ')}]`, 'jobs:job:needs config has too many entries (maximum 50)'),
  job('needs: [1]', 'jobs:job:needs config can only be a string or a hash'),
  job('needs: [{ artifacts: false }]', 'jobs:job:needs config can only be a string or a hash'),
  job('needs: [{ job: a, parallel: 2 }]', 'jobs:job:needs:need:parallel config should be a hash with matrix'),
  job('needs: [{ job: a, parallel: { matrix: [x] } }]', 'jobs:job:needs:need:parallel:matrix config should be an array of hashes'),
  job('artifacts: [a]', 'jobs:job:artifacts config should be a hash'),
  job('artifacts: { path: [a] }', 'jobs:job:artifacts config contains unknown keys: path'),
  job('artifacts: { paths: { a: 1 } }', 'jobs:job:artifacts paths should be an array of strings'),
  job('artifacts: { name: [a] }', 'jobs:job:artifacts name should be a string'),
  job('artifacts: { untracked: x }', 'jobs:job:artifacts untracked should be a boolean value'),
  job('artifacts: { when: never }', 'jobs:job:artifacts when should be on_success, on_failure or always'),
  job('artifacts: { expire_in: soon }', 'jobs:job:artifacts expire in should be a duration'),
  job('artifacts: { expire_in: [1] }', 'jobs:job:artifacts expire in should be a duration'),
  job('artifacts: { reports: [junit] }', 'jobs:job:artifacts:reports config should be a hash'),
  job('artifacts: { reports: { junit: a.xml, surefire: b.xml } }', 'jobs:job:artifacts:reports config contains unknown keys: surefire'),
  job('artifacts: { reports: { junit: { a: 1 } } }', 'jobs:job:artifacts:reports junit should be an array of strings or a string'),
  job('artifacts: { reports: { coverage_report: { coverage_format: cobertura } } }',
    'jobs:job:artifacts:reports coverage_report should be an array of strings or a string'),
  job('artifacts: { exclude: [1] }', 'jobs:job:artifacts exclude should be an array of strings'),
  job('artifacts: { expose_as: [a] }', 'jobs:job:artifacts expose as should be a string'),
  c('job: { trigger: 1 }\n', 'jobs:job:trigger config should be a hash or a string'),
  c('job: { trigger: { project: a/b, ref: main } }\n', 'jobs:job:trigger config contains unknown keys: ref'),
  c('job: { trigger: { project: a/b, strategy: wait } }\n', 'jobs:job:trigger strategy should be depend'),
  c('job: { trigger: { project: a/b, forward: yes } }\n', 'jobs:job:trigger:forward config should be a hash'),
  c('job: { trigger: { project: a/b, forward: { secrets: true } } }\n',
    'jobs:job:trigger:forward config should be a hash of yaml_variables and pipeline_variables booleans'),
  c('job: { trigger: { project: a/b, forward: { yaml_variables: maybe } } }\n',
    'jobs:job:trigger:forward config should be a hash of yaml_variables and pipeline_variables booleans'),
  c('job: { trigger: { project: a/b, include: c.yml } }\n', 'jobs:job:trigger config contains unknown keys: include'),
  c('job: { trigger: { project: [a/b] } }\n', 'jobs:job:trigger project should be a string'),
  c('job: { trigger: { project: a/b, branch: [main] } }\n', 'jobs:job:trigger branch should be a string'),
  c('job: { trigger: { include: c.yml, branch: main } }\n', 'jobs:job:trigger config contains unknown keys: branch'),
  c('job: { trigger: { strategy: depend } }\n', 'jobs:job:trigger config must specify project or include'),
  c('job: { trigger: { include: [] } }\n', 'jobs:job:trigger include config must be an array of up to 3 files'),
  c('job: { trigger: { include: [a.yml, b.yml, c.yml, d.yml] } }\n', 'jobs:job:trigger include config must be an array of up to 3 files'),
  c('job: { trigger: { include: [a.yml, { file: b.yml }] } }\n',
    'jobs:job:trigger include config must be a file path or a hash of local, project, template, remote, artifact or component'),
  c('job: { trigger: { include: 1 } }\n',
    'jobs:job:trigger include config must be a file path or a hash of local, project, template, remote, artifact or component'),
];

export const PARALLEL_ERRORS: ErrorCase[] = [
  job('parallel: 0', 'jobs:job:parallel config must be less than or equal to 200 and greater than or equal to 1'),
  job('parallel: 201', 'jobs:job:parallel config must be less than or equal to 200 and greater than or equal to 1'),
  job('parallel: 1.5', 'jobs:job:parallel config must be less than or equal to 200 and greater than or equal to 1'),
  job('parallel: two', 'jobs:job:parallel should be an integer or a hash'),
  job('parallel: { matrix: x }', 'jobs:job:parallel should be an integer or a hash'),
  job('parallel: { matrix: [{ A: 1 }], max: 2 }', 'jobs:job:parallel should be an integer or a hash'),
  job('parallel: { matrix: [x] }', 'jobs:job:parallel:matrix config should be an array of hashes'),
  job('parallel: { matrix: [{}] }', 'jobs:job:parallel:matrix config should be an array of hashes'),
  job('parallel: { matrix: [{ A: [] }] }',
    'jobs:job:parallel:matrix:variables config should be a hash of key value pairs, value can be an array'),
  job('parallel: { matrix: [{ A: [{ b: 1 }] }] }',
    'jobs:job:parallel:matrix:variables config should be a hash of key value pairs, value can be an array'),
  job(`parallel: { matrix: [{ A: [${many(21, String).replace(/\n/g, ', ')}], B: [${many(10, String).replace(/\n/g, ', ')}] }] }`,
    'jobs:job:parallel:matrix config generates too many jobs (maximum is 200)'),
  job(`parallel: { matrix: [{ A: [${many(150, String).replace(/\n/g, ', ')}] }, { B: [${many(51, String).replace(/\n/g, ', ')}] }] }`,
    'jobs:job:parallel:matrix config generates too many jobs (maximum is 200)'),
];

export const NORMALISE_ERRORS: ErrorCase[] = [
  c('a: { extends: b, script: x }\nb: { extends: a }\n', '`a`: circular dependency detected in `extends`'),
  c('a: { extends: a, script: x }\n', '`a`: circular dependency detected in `extends`'),
  c(`${many(12, (i) => `.l${i}: { extends: .l${i + 1} }`)}\n.l12: { script: x }\njob: { extends: .l0 }\n`,
    '`.l10`: nesting too deep in `extends`'),
  c('job: { extends: [.nope, .gone], script: x }\n', '`job`: unknown keys in `extends` (.nope, .gone)'),
  c('job: { extends: [1], script: x }\n', '`job`: unknown keys in `extends` (1)'),
  c('.base: x\njob: { extends: .base, script: y }\n', '`job`: invalid base hashes in `extends` (.base)'),
  c('job: { script: !reference [.nope, script] }\n', '!reference [".nope", "script"] could not be found'),
  c('.a: { s: x }\njob: { script: !reference [.a, t] }\n', '!reference [".a", "t"] could not be found'),
  c('.a: { s: !reference [.b, s] }\n.b: { s: !reference [.a, s] }\njob: { script: !reference [.a, s] }\n',
    '!reference [".b", "s"] is part of a circular chain'),
  c(referenceBomb, 'The parsed YAML is too big'),
];

/** Where every `needs:` and `dependencies:` points, checked on the whole configuration. */
export const DEPENDENCY_ERRORS: ErrorCase[] = [
  job('needs: [nope]', 'job job: undefined need: nope'),
  c('late: { stage: deploy, script: x }\njob: { stage: build, script: x, needs: [late] }\n',
    'job job: need late is not defined in current or prior stages'),
  job('dependencies: [nope]', 'job job: undefined dependency: nope'),
  c('late: { stage: deploy, script: x }\njob: { stage: build, script: x, dependencies: [late] }\n',
    'job job: dependency late is not defined in current or prior stages'),
  c('a: { stage: build, script: x }\nb: { stage: build, script: x }\njob: { script: x, needs: [a], dependencies: [b] }\n',
    'job job: dependencies the b should be part of needs'),
  // A parallel job's name in needs means all its copies; a copy that does not exist is undefined.
  c('a: { stage: build, script: x, parallel: 2 }\njob: { script: x, needs: [{ job: a, parallel: { matrix: [{ X: "1" }] } }] }\n',
    'job job: undefined need: a: [1]'),
];

const A_YML = 'https://h.example/a.yml';
/** A remote include of `url` that cannot be fetched, and why. */
const remote = (url: string, because: string, world: World = {}) =>
  c(`include: "${url}"\n${OK}`, `Remote file \`${url}\` could not be fetched because ${because}!`, { world });

export const INCLUDE_ERRORS: ErrorCase[] = [
  c(`include: [1]\n${OK}`, 'Include `1` needs to match exactly one accessor!'),
  c(`include: [[a.yml]]\n${OK}`, 'Include `["a.yml"]` needs to match exactly one accessor!'),
  c(`include: { local: a.yml, remote: "http://h/b.yml" }\n${OK}`,
    'Include `{"local":"a.yml","remote":"http://h/b.yml"}` needs to match exactly one accessor!'),
  c(`include: { file: a.yml }\n${OK}`, 'Include `{"file":"a.yml"}` needs to match exactly one accessor!'),
  c(`include: { local: a.yml, ref: main }\n${OK}`, 'Include `{"local":"a.yml","ref":"main"}` needs to match exactly one accessor!'),
  c(`include: { local: [a.yml] }\n${OK}`, 'Include `{"local":["a.yml"]}` needs to match exactly one accessor!'),
  c(`include: { project: [a/b], file: a.yml }\n${OK}`, 'Include `{"project":["a/b"],"file":"a.yml"}` needs to match exactly one accessor!'),
  c(`include: { project: a/b }\n${OK}`, 'Include `{"project":"a/b"}` needs to match exactly one accessor!'),
  c(`include: { project: a/b, file: [] }\n${OK}`, 'Include `{"project":"a/b","file":[]}` needs to match exactly one accessor!'),
  c(`include: { project: a/b, file: a.yml, ref: [main] }\n${OK}`,
    'Include `{"project":"a/b","file":"a.yml","ref":["main"]}` needs to match exactly one accessor!'),
  c(`include: { artifact: a.yml, job: build }\n${OK}`,
    "Include `{\"artifact\":\"a.yml\",\"job\":\"build\"}` of a job artifact is only valid in a child pipeline's trigger"),
  c(`include: { local: a.yml, rules: x }\n${OK}`, 'include rules should be an array of hashes', { world: { files: { 'a.yml': OK } } }),
  c(`include: { local: a.yml, rules: [x] }\n${OK}`, 'include rule should be a hash', { world: { files: { 'a.yml': OK } } }),
  c(`include: { local: a.yml, rules: [{ if: "$A =" }] }\n${OK}`, 'invalid expression syntax: $A =', { world: { files: { 'a.yml': OK } } }),
  c(`include: a.txt\n${OK}`, 'Included file `a.txt` does not have YAML extension!', { world: { files: { 'a.txt': OK } } }),
  c(`include: { project: a/b, file: ci.json }\n${OK}`, 'Included file `ci.json` does not have YAML extension!'),
  c(`include: ci/missing.yml\n${OK}`, 'Local file `ci/missing.yml` does not exist!'),
  c(`include: /ci/missing.yml\n${OK}`, 'Local file `/ci/missing.yml` does not exist!'),
  // Instance-level lint: no project behind the configuration, so nothing local to read (External::File::Local).
  c(`include: ci/a.yml\n${OK}`, 'Local file `ci/a.yml` does not have project!', { world: { files: { 'ci/a.yml': OK }, projectless: true } }),
  c(`include: { local: "ci/*.yml" }\n${OK}`, 'Local file `ci/*.yml` does not exist!', { world: { files: { 'ci/a.yaml': OK } } }),
  c(`include: { project: a/b, file: ci.yml }\n${OK}`,
    'Project `a/b` not found or access denied! Make sure any includes in the pipeline configuration are correctly defined.'),
  c(`include: { project: a/b, ref: v9, file: ci.yml }\n${OK}`, 'Project `a/b` reference `v9` does not exist!',
    { world: { projects: { 'a/b': { defaultBranch: 'main', refs: { main: { 'ci.yml': OK } } } } } }),
  c(`include: { project: a/b, file: ci.yml }\n${OK}`, 'Project `a/b` reference `undefined` does not exist!',
    { world: { projects: { 'a/b': { defaultBranch: null, refs: {} } } } }),
  c(`include: { project: a/b, file: [ci.yml, other.yml] }\n${OK}`, 'Project `a/b` file `other.yml` does not exist!',
    { world: { projects: { 'a/b': { defaultBranch: 'main', refs: { main: { 'ci.yml': 'a: { script: x }\n' } } } } } }),
  c(`include: { remote: "ftp://h/a.yml" }\n${OK}`, 'Remote file `ftp://h/a.yml` does not have a valid address!'),
  c(`include: { remote: "http://" }\n${OK}`, 'Remote file `http://` does not have a valid address!'),
  remote('https://h.example/a.yml', 'no remote hosts are allowed'),
  remote('https://evil.example/a.yml', 'its host is not in the allowed remote hosts', { remoteHosts: ['h.example'] }),
  remote('https://h.example:8443/a.yml', 'its host is not in the allowed remote hosts', { remoteHosts: ['h.example:9443'] }),
  remote(A_YML, 'of a timeout error', { remoteHosts: ['h.example'], remote: { [A_YML]: 'timeout' } }),
  remote(A_YML, 'of a socket error', { remoteHosts: ['h.example'], remote: { [A_YML]: 'socket' } }),
  remote(A_YML, 'of a socket error', { remoteHosts: ['h.example'], remote: { [A_YML]: 'broken' } }),
  remote(A_YML, 'of HTTP code `404` error', { remoteHosts: ['h.example'] }),
  remote(A_YML, 'of HTTP code `302` error', { remoteHosts: ['h.example'], remote: { [A_YML]: { status: 302 } } }),
  remote(A_YML, 'of HTTP code `500` error', { remoteHosts: ['h.example'], remote: { [A_YML]: { status: 500, body: 'oops' } } }),
  // More than 1 MiB of body: the read stops there.
  remote(A_YML, 'of HTTP error', { remoteHosts: ['h.example'], remote: { [A_YML]: { bytes: 1024 * 1024 } } }),
  c(`include: { template: ../secrets.gitlab-ci.yml }\n${OK}`,
    'Template file `../secrets.gitlab-ci.yml` is not a valid location!', { world: { templates: {} } }),
  c(`include: { template: Jobs/Build.yml }\n${OK}`,
    'Template file `Jobs/Build.yml` is not a valid location!', { world: { templates: {} } }),
  c(`include: { template: Jobs/Nope.gitlab-ci.yml }\n${OK}`,
    'Included file `Jobs/Nope.gitlab-ci.yml` is empty or does not exist!', { world: { templates: {} } }),
  c(`include: empty.yml\n${OK}`,
    'Included file `empty.yml` is empty or does not exist!', { world: { files: { 'empty.yml': '# nothing\n' } } }),
  c(`include: bad.yml\n${OK}`, 'Included file `bad.yml` does not have valid YAML syntax!', { world: { files: { 'bad.yml': 'job: [\n' } } }),
  c(`include: list.yml\n${OK}`,
    'Included file `list.yml` does not have valid YAML syntax!', { world: { files: { 'list.yml': '- a\n- b\n' } } }),
  c(`include: big.yml\n${OK}`, 'The parsed YAML is too big', { world: { files: { 'big.yml': aliasBomb } } }),
  c(`include: a.yml\n${OK}`,
    'Include `a.yml` was already included!', { world: { files: { 'a.yml': 'include: b.yml\n', 'b.yml': 'include: a.yml\n' } } }),
  c(`include: a.yml\n${OK}`, 'Include `/a.yml` was already included!', { world: { files: { 'a.yml': 'include: /a.yml\n' } } }),
  // 101 files in all, one list: the count is refused before the 101st is read.
  c(`include: [${many(101, (i) => `f${i}.yml`).replace(/\n/g, ', ')}]\n${OK}`, 'Maximum of 100 nested includes are allowed!',
    { world: { files: Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`f${i}.yml`, `j${i}: { script: x }\n`])) } }),
  // 101 files each including the next.
  c(`include: f0.yml\n${OK}`, 'Maximum of 100 nested includes are allowed!',
    { world: { files: Object.fromEntries(Array.from({ length: 102 }, (_, i) => [`f${i}.yml`, `include: f${i + 1}.yml\n`])) } }),
];

/** Refusals that come only when the pipeline is selected (rules, workflow, needs of the jobs left). */
export const SELECT_ERRORS: ErrorCase[] = [
  c(`workflow: { rules: [{ if: $CI_COMMIT_TAG }] }\n${OK}`, 'Pipeline filtered out by workflow rules.', { pipeline: {} }),
  c(`workflow: { rules: [{ if: $CI_COMMIT_TAG, when: always }, { when: never }] }\n${OK}`,
    'Pipeline filtered out by workflow rules.', { pipeline: {} }),
  c('job: { script: x, rules: [{ if: $CI_COMMIT_TAG }] }\n', 'No stages / jobs for this pipeline.', { pipeline: {} }),
  c('job: { script: x, only: [tags] }\n', 'No stages / jobs for this pipeline.', { pipeline: {} }),
  c('job: { script: x, except: [main] }\n', 'No stages / jobs for this pipeline.', { pipeline: {} }),
  c('first: { stage: .pre, script: x }\nlast: { stage: .post, script: x }\n', 'No stages / jobs for this pipeline.', { pipeline: {} }),
  c('a: { stage: build, script: x, rules: [{ if: $CI_COMMIT_TAG }] }\njob: { script: x, needs: [a] }\n',
    "'job' job needs 'a' job, but 'a' is not in any previous stage", { pipeline: {} }),
  c('job: { script: x, rules: [{ if: $CI_COMMIT_TAG }] }\nb: { script: x, rules: [{ when: always, needs: [job] }] }\n',
    "'b' job needs 'job' job, but 'job' is not in any previous stage", { pipeline: {} }),
];

/** `include: { local: t.yml, inputs: … }` of a file with this header and body. */
const withInputs = (header: string, body: string, inputs: string, error: string) => c(
  `include: { local: t.yml, inputs: ${inputs} }\n${OK}`, error ? `\`t.yml\`: ${error}` : error,
  { world: { files: { 't.yml': `${header}\n---\n${body}` } } },
);
const BODY = 'tjob: { script: "$[[ inputs.a ]]" }\n';

export const INPUTS_ERRORS: ErrorCase[] = [
  // The pipeline's own file takes no inputs, so its header's inputs need defaults.
  c(`spec: { inputs: { a: } }\n---\n${OK}`, '`a` input: required value has not been provided'),
  withInputs('spec: { inputs: { a: } }', BODY, '{}', '`a` input: required value has not been provided'),
  withInputs('spec: { inputs: { a: } }', BODY, '{ a: x, b: y, c: z }', 'unknown input arguments: b, c'),
  c(`include: { local: t.yml, inputs: { a: x } }\n${OK}`, '`t.yml`: Given inputs not defined in the `spec` section of the included configuration file',
    { world: { files: { 't.yml': BODY } } }),
  withInputs('spec: { inputs: { a: } }', BODY, '[x]', 'Given inputs must be a hash'),
  // Types, of the value given and of the default.
  withInputs('spec: { inputs: { a: } }', BODY, '{ a: 1 }', '`a` input: provided value is not a string'),
  withInputs('spec: { inputs: { a: { type: number } } }', BODY, '{ a: "1" }', '`a` input: provided value is not a number'),
  withInputs('spec: { inputs: { a: { type: boolean } } }', BODY, '{ a: "yes" }', '`a` input: provided value is not a boolean'),
  withInputs('spec: { inputs: { a: { type: array } } }', BODY, '{ a: x }', '`a` input: provided value is not an array'),
  withInputs('spec: { inputs: { a: { default: 1 } } }', BODY, '{}', '`a` input: default value is not a string'),
  // options and regex.
  withInputs('spec: { inputs: { a: { options: [x, y] } } }', BODY, '{ a: z }',
    '`a` input: `z` cannot be used because it is not in the list of allowed options'),
  withInputs('spec: { inputs: { a: { type: number, options: [1, 2] } } }', BODY, '{ a: 3 }',
    '`a` input: `3` cannot be used because it is not in the list of the allowed options'),
  withInputs('spec: { inputs: { a: { type: boolean, options: [true] } } }', BODY, '{ a: true }',
    '`a` input: Options can only be used with string and number inputs'),
  withInputs('spec: { inputs: { a: { regex: "^v\\\\d+$" } } }', BODY, '{ a: x1 }', '`a` input: provided value does not match required RegEx pattern'),
  withInputs('spec: { inputs: { a: { regex: "^v", default: x } } }', BODY, '{}', '`a` input: default value does not match required RegEx pattern'),
  withInputs('spec: { inputs: { a: { regex: "(" } } }', BODY, '{ a: x }', '`a` input: invalid regular expression'),
  withInputs('spec: { inputs: { a: { type: number, regex: "1" } } }', BODY, '{ a: 1 }', '`a` input: RegEx validation can only be used with string inputs'),
  // Several errors: the first three, joined.
  withInputs('spec: { inputs: { a: , b: , c: , d: } }', BODY, '{}',
    '`a` input: required value has not been provided, `b` input: required value has not been provided, '
    + '`c` input: required value has not been provided'),
  // The header as its entries word it.
  withInputs('spec: x', BODY, '{}', 'header:spec config should be a hash'),
  withInputs('spec: { arguments: { a: } }', BODY, '{}', 'header:spec config contains unknown keys: arguments'),
  withInputs('spec: { inputs: [a] }', BODY, '{}', 'header:spec:inputs config should be a hash'),
  withInputs('spec: { inputs: { a: x } }', BODY, '{}', 'header:spec:inputs:a config should be a hash'),
  withInputs('spec: { inputs: { a: { kind: x } } }', BODY, '{}', 'header:spec:inputs:a config contains unknown keys: kind'),
  withInputs('spec: { inputs: { a: { description: [x] } } }', BODY, '{}', 'header:spec:inputs:a input description must be an alphanumeric string'),
  withInputs('spec: { inputs: { a: { regex: [x] } } }', BODY, '{}', 'header:spec:inputs:a input regex should be a string'),
  withInputs('spec: { inputs: { a: { type: hash } } }', BODY, '{}', 'header:spec:inputs:a input type unknown value: hash'),
  withInputs('spec: { inputs: { a: { options: x } } }', BODY, '{}', 'header:spec:inputs:a input options should be an array'),
  withInputs(`spec: { inputs: { a: { options: [${Array.from({ length: 51 }, (_, i) => i).join(', ')}] } } }`, BODY, '{}',
    'header:spec:inputs:a config cannot define more than 50 options'),
  // The blocks of the body.
  withInputs('spec: { inputs: { a: } }', 'tjob: { script: "$[[ inputs ]]" }\n', '{ a: x }', 'invalid interpolation access pattern'),
  withInputs('spec: { inputs: { a: } }', `tjob: { script: "$[[ inputs.${'a'.repeat(1100)} ]]" }\n`, '{ a: x }',
    'maximum interpolation expression size exceeded'),
  withInputs('spec: { inputs: { a: } }', 'tjob: { script: "$[[ inputs.b ]]" }\n', '{ a: x }', 'unknown interpolation key: `b`'),
  withInputs('spec: { inputs: { a: } }', 'tjob: { script: "$[[ vars.a ]]" }\n', '{ a: x }', 'unknown interpolation key: `vars`'),
  withInputs('spec: { inputs: { a: } }', 'tjob: { script: "$[[ inputs.a.b ]]" }\n', '{ a: x }', 'unknown interpolation key: `b`'),
  withInputs('spec: { inputs: { a: } }', 'tjob: { script: "$[[ inputs.a | truncate(0,1) | truncate(0,1) | truncate(0,1) | truncate(0,1) ]]" }\n',
    '{ a: x }', 'too many functions in interpolation block'),
  withInputs('spec: { inputs: { a: } }', 'tjob: { script: "$[[ inputs.a | upcase ]]" }\n', '{ a: x }',
    'no function matching `upcase`: check that the function name, arguments, and types are correct'),
  withInputs('spec: { inputs: { a: { type: number } } }', 'tjob: { script: "$[[ inputs.a | truncate(0, 1) ]]" }\n', '{ a: 1 }',
    'error in `truncate` function: invalid input type: truncate can only be used with string inputs'),
  withInputs('spec: { inputs: { a: { type: array } } }', 'tjob: { script: "$[[ inputs.a | expand_vars ]]" }\n', '{ a: [x] }',
    'error in `expand_vars` function: invalid input type: expand_vars can only be used with string inputs'),
  // Bounds: blocks a file, bytes interpolation puts in, one node's size.
  withInputs(`spec: { inputs: { ${many(101, (i) => `i${i}: { default: x }`).replace(/\n/g, ', ')} } }`,
    `tjob: { script: [${many(101, (i) => `"$[[ inputs.i${i} ]]"`).replace(/\n/g, ', ')}] }\n`, '{}', 'too many interpolation blocks'),
  withInputs('spec: { inputs: { a: } }', `tjob: { script: [${Array(40).fill('"$[[ inputs.a ]]"').join(', ')}] }\n`,
    `{ a: "${'x'.repeat(30_000)}" }`, 'config too large'),
  withInputs('spec: { inputs: { a: } }', `tjob: { script: "${'x'.repeat(MAX_BYTES - 150)} $[[ inputs.a ]]" }\n`, `{ a: ${'y'.repeat(200)} }`,
    'config node too large'),
];

/** `include: component:` of the in-memory kiln (memory.ts's MEMORY_FQDN) and its refusals. */
const COMPONENT_WORLD: World = {
  projects: { 'g/comps': { refs: { main: { 'templates/build.yml': 'cjob: { script: x }\n' } } } },
  releases: { 'g/comps': ['1.0.0-rc1', 'rel'] },
};
const component = (address: string, error: string, world: World = COMPONENT_WORLD) =>
  c(`include: { component: "${address}" }\n${OK}`, `Component '${address}' - ${error}`, { world });

export const COMPONENT_ERRORS: ErrorCase[] = [
  // Another host: the address, host and all, in the message, as for a remote host not allowed.
  component('gitlab.example/g/comps/build@main', 'the component path is not supported'),
  component(`${MEMORY_FQDN}.evil.example/g/comps/build@main`, 'the component path is not supported'),
  // No version.
  component(`${MEMORY_FQDN}/g/comps/build`, 'the component path is not supported'),
  component(`${MEMORY_FQDN}/g/nope/build@main`, "project does not exist or you don't have sufficient permissions"),
  component(`${MEMORY_FQDN}/build@main`, "project does not exist or you don't have sufficient permissions"),
  component(`${MEMORY_FQDN}/g/comps/build@v9`, 'content not found'),
  component(`${MEMORY_FQDN}/g/comps/build@`, 'content not found'),
  component(`${MEMORY_FQDN}/g/comps/test@main`, 'content not found'),
  // The last `/` parts project and component: this names a project g/comps/build.
  component(`${MEMORY_FQDN}/g/comps/build/template@main`, "project does not exist or you don't have sufficient permissions"),
  // Only a pre-release and a tag that is no version are released: no ~latest.
  component(`${MEMORY_FQDN}/g/comps/build@~latest`, 'content not found'),
  c(`include: { component: "${MEMORY_FQDN}/g/comps/build@main" }\n${OK}`, 'Unable to use components outside of a project context',
    { world: { ...COMPONENT_WORLD, projectless: true } }),
];

/** Keywords the Service added after 15.2 (issue 28, item 4). */
export const LATER_KEYWORD_ERRORS: ErrorCase[] = [
  job('secrets: { DB: { vault: db/password } }',
    'jobs:job secrets are not supported: kiln has no external secrets provider; use CI/CD variables instead'),
  job('pages: x', 'jobs:job pages should be a hash or a boolean value'),
  job('pages: true, publish: [a]', 'jobs:job publish should be a string'),
  job('pages: { where: a }', 'jobs:job:pages config contains unknown keys: where'),
  job('pages: { path_prefix: mr }', 'jobs:job:pages path_prefix is not supported: kiln does not host Pages sites'),
  job('pages: { publish: 1 }', 'jobs:job:pages publish should be a string'),
  job('rules: [{ interruptible: maybe }]', 'jobs:job:rules:rule interruptible should be a boolean value'),
  job('artifacts: { paths: [a], public: false, access: none }', 'jobs:job:artifacts config these keys cannot be used together: public, access'),
  job('artifacts: { paths: [a], public: maybe }', 'jobs:job:artifacts public should be a boolean value'),
  job('artifacts: { paths: [a], access: everyone }', 'jobs:job:artifacts access should be one of: none, developer, maintainer, all'),
  job('cache: { key: k, fallback_keys: k2 }', 'jobs:job:cache fallback keys should be an array of strings'),
  job('cache: { key: k, fallback_keys: [a, b, c, d, e, f] }', 'jobs:job:cache fallback keys has too many entries (maximum 5)'),
  job('id_tokens: [a]', 'jobs:job:id_tokens config should be a hash'),
  job('id_tokens: { "A-B": { aud: x } }', 'jobs:job:id_tokens A-B is not a valid variable name'),
  job('id_tokens: { A: x }', 'jobs:job:id_tokens:A config should be a hash'),
  job('id_tokens: { A: { aud: x, sub: y } }', 'jobs:job:id_tokens:A config contains unknown keys: sub'),
  job('id_tokens: { A: {} }', 'jobs:job:id_tokens:A config missing required keys: aud'),
  job('id_tokens: { A: { aud: [] } }', 'jobs:job:id_tokens:A aud should be a string or an array of strings'),
  c(`default: { id_tokens: { A: { aud: 1 } } }\n${OK}`, 'default:id_tokens:A aud should be a string or an array of strings'),
  c(`workflow: { name: [x] }\n${OK}`, 'workflow name should be a string'),
  c(`workflow: { name: ${'n'.repeat(256)} }\n${OK}`, 'workflow name is too long (maximum is 255 characters)'),
  c(`workflow: { auto_cancel: x }\n${OK}`, 'workflow:auto_cancel config should be a hash'),
  c(`workflow: { auto_cancel: { on_push: none } }\n${OK}`, 'workflow:auto_cancel config contains unknown keys: on_push'),
  c(`workflow: { auto_cancel: { on_new_commit: always } }\n${OK}`,
    'workflow:auto_cancel on new commit must be one of: conservative, interruptible, none'),
  c(`workflow: { auto_cancel: { on_job_failure: some } }\n${OK}`, 'workflow:auto_cancel on job failure must be one of: none, all'),
  // workflow:rules:auto_cancel (16.8): only a workflow rule takes it, checked as workflow:auto_cancel is.
  c(`workflow: { rules: [{ if: $CI_COMMIT_BRANCH, auto_cancel: { on_new_commit: always } }] }\n${OK}`,
    'workflow:rules:rule:auto_cancel on new commit must be one of: conservative, interruptible, none'),
  c(`workflow: { rules: [{ auto_cancel: { on_job_failure: some } }] }\n${OK}`,
    'workflow:rules:rule:auto_cancel on job failure must be one of: none, all'),
  c(`workflow: { rules: [{ auto_cancel: none }] }\n${OK}`, 'workflow:rules:rule:auto_cancel config should be a hash'),
  c(`workflow: { rules: [{ auto_cancel: { on_push: none } }] }\n${OK}`, 'workflow:rules:rule:auto_cancel config contains unknown keys: on_push'),
  c(`workflow: { rules: [{ when: always, interruptible: true }] }\n${OK}`, 'workflow:rules:rule config contains unknown keys: interruptible'),
  job('rules: [{ when: always, auto_cancel: { on_new_commit: none } }]', 'jobs:job:rules:rule config contains unknown keys: auto_cancel'),
];

export const ALL_ERROR_CASES: Record<string, ErrorCase[]> = {
  yaml: YAML_ERRORS, root: ROOT_ERRORS, default: DEFAULT_ERRORS, job: JOB_ERRORS, rules: RULES_ERRORS, 'only/except': ONLY_EXCEPT_ERRORS,
  keywords: KEYWORD_ERRORS, 'needs, artifacts, trigger': DETAIL_ERRORS, parallel: PARALLEL_ERRORS, 'extends, !reference': NORMALISE_ERRORS,
  dependencies: DEPENDENCY_ERRORS, include: INCLUDE_ERRORS, 'include:component': COMPONENT_ERRORS, 'keywords after 15.2': LATER_KEYWORD_ERRORS, selection: SELECT_ERRORS, 'spec:inputs': INPUTS_ERRORS,
};
