// Who may talk to the page: the core's `origin_allowed` (core/src/widget/origins.rs), the same
// rule byte for byte. A test runs that function's unit-test cases against this one.

/** Whether the page may post to a parent at `origin` (the browser-given `event.origin` of the
 * loader's `hello`): one of the partner's registered origins (exact, as `GET /v1/widget/config`
 * lists them), or in sandbox `http://localhost` / `http://127.0.0.1` with no port or any port
 * 0 to 65535. */
export function originAllowed(origin: string, registered: readonly string[], environment: string): boolean {
  if (registered.indexOf(origin) >= 0) return true;
  if (environment !== "sandbox") return false;
  for (const local of ["http://localhost", "http://127.0.0.1"]) {
    if (origin.indexOf(local) !== 0) continue;
    const rest = origin.slice(local.length);
    if (rest === "" || (rest.charAt(0) === ":" && isPort(rest.slice(1)))) return true;
  }
  return false;
}

/** 1 to 5 ASCII digits whose value fits in 16 bits (Rust's `u16` parse after a digit check). */
function isPort(text: string): boolean {
  return /^[0-9]{1,5}$/.test(text) && Number(text) <= 65535;
}
