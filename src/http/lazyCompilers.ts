import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';

// Fastify compiles every route's validators and response serializers when the server gets
// ready: generated code for ~150 schemas, most of them never used by a given process (an
// integration sends messages and polls them). Compiling each on its first use instead takes
// about a second off start-up — a second the event loop was held, with the workers' first sends
// waiting behind it — and keeps unused compiled code out of the heap.

/** Defers `compile` to the first call of the function it returns, then calls the compiled one. */
export function compiledOnFirstUse<Args extends unknown[], Result>(compile: () => (...args: Args) => Result): (...args: Args) => Result {
  let compiled: ((...args: Args) => Result) | undefined;
  return (...args) => (compiled ??= compile())(...args);
}

type SerializerFactory = ReturnType<typeof SerializerSelector>;

/** Fastify's own serializer factory (fast-json-stringify), each route's serializer built on first use. */
export const serializersOnFirstUse: SerializerFactory = (externalSchemas, options) => {
  const build = SerializerSelector()(externalSchemas, options);
  return (route) => compiledOnFirstUse(() => build(route));
};
