// Bundles poc/worker the way `celld deploy` does (esbuild, one ES module) and serves requests
// with the bundle in node, checking the exact JSON the Kind demo's curl shows.
//
//   ESBUILD=/path/to/esbuild node --test poc/test/worker.test.mjs
//
// `make check-packaging` installs the pinned esbuild from npm and runs this.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const worker = join(dirname(fileURLToPath(import.meta.url)), "..", "worker");
const esbuild = process.env.ESBUILD || "esbuild";
const EXPECTED =
  '{"message":"hello from a locally deployed multi-file Worker","runtime":"celld","path":"/hello"}';

// wrangler.jsonc allows // and /* */ comments; this project has no "//" inside strings.
function readWranglerConfig() {
  const text = readFileSync(join(worker, "wrangler.jsonc"), "utf8");
  return JSON.parse(text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*\/\/.*$/gm, ""));
}

let bundled;
async function bundle() {
  if (bundled) return bundled;
  const out = mkdtempSync(join(tmpdir(), "celld-poc-worker-"));
  const outfile = join(out, "index.mjs");
  execFileSync(
    esbuild,
    [
      join(worker, readWranglerConfig().main),
      "--bundle",
      "--format=esm",
      "--platform=neutral",
      "--log-level=warning",
      `--outfile=${outfile}`,
    ],
    { stdio: ["ignore", "inherit", "inherit"] },
  );
  const source = readFileSync(outfile, "utf8");
  const module = await import(pathToFileURL(outfile).href);
  rmSync(out, { recursive: true, force: true });
  bundled = { source, worker: module.default };
  return bundled;
}

async function get(path) {
  const { worker: w } = await bundle();
  return w.fetch(new Request(`http://local.celld.dev${path}`));
}

test("wrangler.jsonc uses only keys celld v0.4.0 accepts and points at an entry module", () => {
  const config = readWranglerConfig();
  assert.deepEqual(Object.keys(config).sort(), ["compatibility_date", "main", "name"]);
  assert.match(config.name, /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/);
  assert.ok(config.main.endsWith(".js"));
});

test("the multi-file Worker bundles into one self-contained module", async () => {
  const { source } = await bundle();
  assert.doesNotMatch(source, /^\s*import\s/m, "the bundle still imports modules");
  for (const file of ["index.js", "routes.js", "greeting.js", "respond.js"]) {
    assert.ok(source.includes(`src/${file}`), `src/${file} is not in the bundle`);
  }
});

test("GET /hello answers the exact JSON of the demo", async () => {
  const response = await get("/hello");
  assert.equal(response.status, 200);
  assert.match(response.headers.get("content-type"), /^application\/json/);
  assert.equal(await response.text(), EXPECTED);
});

test("GET /hello reports the path it saw, without the query", async () => {
  const response = await get("/hello?from=test");
  assert.equal(response.status, 200);
  assert.deepEqual(JSON.parse(await response.text()).path, "/hello");
});

test("an unstripped /api/hello is not found and says which path arrived", async () => {
  const response = await get("/api/hello");
  assert.equal(response.status, 404);
  assert.equal(await response.text(), '{"error":"not found","path":"/api/hello"}');
});

test("only GET is routed", async () => {
  const { worker: w } = await bundle();
  const response = await w.fetch(new Request("http://local.celld.dev/hello", { method: "POST" }));
  assert.equal(response.status, 404);
});
