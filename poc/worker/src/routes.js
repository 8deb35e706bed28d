// The route table, in its own module to show imports across files.
import { json } from "./respond.js";
import { greeting } from "./greeting.js";

const routes = new Map([
  ["GET /hello", (url) => json(greeting(url.pathname))],
]);

export function route(method, pathname) {
  return routes.get(`${method} ${pathname}`);
}
