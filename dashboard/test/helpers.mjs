// Shared by the tests: the TypeScript sources compiled on the fly (esbuild, in memory) and the
// built page (RAMPART_DASHBOARD_DIST, default dashboard/dist).
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { buildSync } from "esbuild";

export const DASHBOARD_DIR = resolve(dirname(fileURLToPath(import.meta.url)), "..");
export const DIST_DIR = resolve(process.env.RAMPART_DASHBOARD_DIST || join(DASHBOARD_DIR, "dist"));

/** Imports `src/<name>.ts` (bundled with what it imports) as an ES module. */
export async function importSource(name) {
  const result = buildSync({
    absWorkingDir: DASHBOARD_DIR,
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
