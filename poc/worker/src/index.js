// Entry module: routes a request to a handler from ./routes.js.
import { route } from "./routes.js";
import { json } from "./respond.js";

export default {
  async fetch(request) {
    const url = new URL(request.url);
    const handler = route(request.method, url.pathname);
    if (!handler) {
      return json({ error: "not found", path: url.pathname }, 404);
    }
    return handler(url);
  },
};
