/**
 * Response serialisers, compiled on first use. fast-json-stringify turns each response schema into
 * generated source (the Job entity's is 70–140 KB); compiling all ~290 of kiln's at boot kept
 * 5.6 MB of that source and its code in memory for routes a given instance may never answer, and
 * made boot wait for them (issue 17, item 5). `serializerCompiler` is the app's; the routes whose
 * entity depends on the viewer compile their variants with `compileSerializer`, lazily too.
 * test/api/response-schemas.test.ts compiles every one of them, so a broken schema still fails CI
 * rather than a first request.
 */
import { isDeepStrictEqual } from 'node:util';
import fastJson from 'fast-json-stringify';
import type { TSchema } from 'typebox';
import type { FastifyReply, FastifySerializerCompiler } from 'fastify';

type Serializer = (doc: unknown) => string;

/** Every serialiser made so far, so that a test can compile them all. */
const pending = new Set<{ compile(): Serializer }>();

const EXACT = Symbol('kiln.exactJson');

/**
 * Marks a response schema whose presenters build exactly its objects (no field it lacks, every
 * value of its type), so that JSON.stringify can write it. fast-json-stringify builds its output
 * by appending thousands of pieces, and the string must then be flattened to be measured and
 * sent: on a page of 20 jobs (33 KB) serialising and measuring cost 98 µs that way against 58 µs
 * with JSON.stringify, which writes one flat string (issue 17, item 1). Under `npm test`
 * (KILN_CHECK_SERIALIZERS=1) every such answer is also serialised by its schema and must read back
 * as the same fields and values, so a presenter that strays from its schema fails the suite.
 */
export function exactJson<T extends TSchema>(schema: T): T {
  (schema as unknown as Record<symbol, boolean>)[EXACT] = true;
  return schema;
}

/** Whether answers are checked against their schemas (KILN_CHECK_SERIALIZERS=1, set by `npm test`). */
export const checkingSerializers = process.env.KILN_CHECK_SERIALIZERS === '1';

function exact(schema: object): Serializer {
  const bySchema = bySchemaOnFirstUse(schema);
  if (!checkingSerializers) return (doc) => JSON.stringify(doc);
  return (doc) => {
    const written = JSON.stringify(doc);
    const expected = bySchema(doc);
    // The same fields and values; the order may differ, as fast-json-stringify writes optional
    // fields after required ones and a presenter writes them where the Service does.
    if (!isDeepStrictEqual(JSON.parse(written), JSON.parse(expected))) {
      const message = `a presenter strays from its exactJson schema: ${written.slice(0, 400)} … by the schema: ${expected.slice(0, 400)}`;
      // Tests run without logs: the 500 alone would not say which field strayed.
      console.error(message);
      throw new Error(message);
    }
    return written;
  };
}

/** fast-json-stringify's serialiser for `schema`, compiled when first called. */
function bySchemaOnFirstUse(schema: object): Serializer {
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

function serializerFor(schema: object): Serializer {
  return (schema as Record<symbol, unknown>)[EXACT] ? exact(schema) : bySchemaOnFirstUse(schema);
}

export function compileSerializer(schema: TSchema): Serializer {
  return serializerFor(schema as object);
}

/**
 * The app's serializer compiler: Fastify's default (fast-json-stringify with no shared schemas —
 * kiln's schemas are inline) made lazy.
 */
export const serializerCompiler: FastifySerializerCompiler<unknown> = ({ schema }) => serializerFor(schema as object);

/** Compiles every serialiser not compiled yet; throws the first schema fast-json-stringify refuses. */
export function compileAllSerializers(): number {
  let n = 0;
  for (const entry of [...pending]) {
    entry.compile();
    n += 1;
  }
  return n;
}

/**
 * `parts` written as one flat string. JSON.stringify writes an answer on a fast path (V8 14, Node
 * 26) that takes flat strings only: a template literal or `+` making more than 12 characters makes
 * a rope (a ConsString; a `slice` of 13 or more a SlicedString), and one such string anywhere in an
 * answer sends the whole of it to the slow path. bench/serialise.ts: 20 users (UserWithAdmin,
 * 17 KB) presented and written in 17 µs with flat strings, 38 µs with template literals. Strings read from
 * the database and from JSON.parse are flat already; the strings a presenter builds for every item
 * of a list (web_url and the like) are written with this.
 */
export function flat(...parts: (string | number)[]): string {
  return parts.join('');
}

/**
 * A space-separated list (a job's or a runner's tags) as flat strings. `split` returns each word
 * of 13 or more characters as a slice of the list (a SlicedString), which JSON.stringify's fast
 * path does not take either (see `flat`): such a word is copied in pieces of 12, each a flat copy,
 * joined. bench/serialise.ts, 20 jobs (30 KB) tagged `docker-privileged linux-amd64-large`: their
 * tag lists made and the page written in 13 µs so, 25 µs split.
 */
export function flatWords(list: string): string[] {
  if (list === '') return [];
  const words = list.split(' ');
  for (let w = 0; w < words.length; w++) {
    const word = words[w];
    if (word.length < 13) continue;
    const pieces: string[] = [];
    for (let i = 0; i < word.length; i += 12) pieces.push(word.slice(i, i + 12));
    words[w] = pieces.join('');
  }
  return words;
}

/** Serialises this reply with `serializer`, as JSON. */
export function serializeWith(reply: FastifyReply, serializer: (doc: unknown) => string): void {
  reply.type('application/json').serializer(serializer);
}
