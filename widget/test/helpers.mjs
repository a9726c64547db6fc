// Shared by the tests: the TypeScript sources compiled on the fly (esbuild, in memory) and the
// built loader and npm package (RAMPART_WIDGET_DIST, default widget/dist: `make widget-test`
// points it at the fresh build it has just compared with the committed one).
import { readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { buildSync } from "esbuild";

export const WIDGET_DIR = resolve(dirname(fileURLToPath(import.meta.url)), "..");
export const REPO_DIR = resolve(WIDGET_DIR, "..");
export const DIST_DIR = resolve(process.env.RAMPART_WIDGET_DIST || join(WIDGET_DIR, "dist"));
/** The built npm package @rampart/widget (what `make widget-pack` packs). */
export const NPM_DIR = join(DIST_DIR, "npm");

/** Imports `src/<name>.ts` (bundled with what it imports) as an ES module. */
export async function importSource(name) {
  const result = buildSync({
    absWorkingDir: WIDGET_DIR,
    entryPoints: [`src/${name}.ts`],
    bundle: true,
    format: "esm",
    platform: "neutral",
    target: "es2019",
    write: false,
  });
  const code = result.outputFiles[0].text;
  return import("data:text/javascript;base64," + Buffer.from(code).toString("base64"));
}

/** A shared vector file under tests/vectors/. */
export function vectors(path) {
  return JSON.parse(readFileSync(join(REPO_DIR, "tests", "vectors", path), "utf8"));
}

/** The built loader's text. */
export function loaderSource() {
  return readFileSync(join(DIST_DIR, "rampart.js"), "utf8");
}

/** The built npm module's text: `index.js` (ESM) or `index.cjs` (CommonJS). */
export function moduleSource(file = "index.cjs") {
  return readFileSync(join(NPM_DIR, file), "utf8");
}
