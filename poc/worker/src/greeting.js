// The body of GET /hello. `path` is the path the Worker saw: behind an Ingress or HTTPRoute
// with stripPrefix, /api/hello arrives here as /hello.
export const MESSAGE = "hello from a locally deployed multi-file Worker";
export const RUNTIME = "celld";

export function greeting(path) {
  return { message: MESSAGE, runtime: RUNTIME, path };
}
