/**
 * Response serialisers, compiled on first use. fast-json-stringify turns each response schema into
 * generated source (the Job entity's is 70–140 KB); compiling all ~290 of kiln's at boot kept
 * 5.6 MB of that source and its code in memory for routes a given instance may never answer, and
 * made boot wait for them (issue 17, item 5). `serializerCompiler` is the app's; the routes whose
 * entity depends on the viewer compile their variants with `compileSerializer`, lazily too.
 * test/api/response-schemas.test.ts compiles every one of them, so a broken schema still fails CI
 * rather than a first request.
 */
import fastJson from 'fast-json-stringify';
import type { TSchema } from 'typebox';
import type { FastifyReply, FastifySerializerCompiler } from 'fastify';

type Serializer = (doc: unknown) => string;

/** Every serialiser made so far, so that a test can compile them all. */
const pending = new Set<{ compile(): Serializer }>();

function lazy(schema: object): Serializer {
  let compiled: Serializer | null = null;
  const entry = {
    compile: (): Serializer => {
      if (!compiled) {
        compiled = fastJson(schema) as Serializer;
        pending.delete(entry);
      }
      return compiled;
    },
  };
  pending.add(entry);
  return (doc) => (compiled ?? entry.compile())(doc);
}

export function compileSerializer(schema: TSchema): Serializer {
  return lazy(schema as object);
}

/**
 * The app's serializer compiler: Fastify's default (fast-json-stringify with no shared schemas —
 * kiln's schemas are inline) made lazy.
 */
export const serializerCompiler: FastifySerializerCompiler<unknown> = ({ schema }) => lazy(schema as object);

/** Compiles every serialiser not compiled yet; throws the first schema fast-json-stringify refuses. */
export function compileAllSerializers(): number {
  let n = 0;
  for (const entry of [...pending]) {
    entry.compile();
    n += 1;
  }
  return n;
}

/** Serialises this reply with `serializer`, as JSON. */
export function serializeWith(reply: FastifyReply, serializer: (doc: unknown) => string): void {
  reply.type('application/json').serializer(serializer);
}
