// The scratch directory a Claude Code runner (run.mjs, tui.mjs) works in, and the steps that
// come before the client starts. Layout under OUT: home/ (HOME, with .claude/), project/,
// bin/ (`sqz` linked to the binary under test, first on PATH), tmp/ (TMPDIR), store/ (sqz's).

import fs from "node:fs";
import path from "node:path";
import { run, replaceInStrings } from "../lib/harness.mjs";

/// Makes the directories and returns their paths and the environment that points into them.
export function scratch({ out, sqz, claude }) {
  const s = {
    out,
    home: path.join(out, "home"),
    project: path.join(out, "project"),
    bin: path.join(out, "bin"),
    tmp: path.join(out, "tmp"),
    db: path.join(out, "store", "sessions.db"),
  };
  for (const d of [path.join(s.home, ".claude"), s.project, s.bin, s.tmp]) fs.mkdirSync(d, { recursive: true });
  if (!fs.existsSync(claude)) throw new Error(`Claude Code is not installed at ${claude}`);
  fs.symlinkSync(sqz, path.join(s.bin, "sqz"));
  s.env = {
    PATH: `${s.bin}:${process.env.PATH}`,
    HOME: s.home,
    TMPDIR: s.tmp,
    LANG: "C.UTF-8",
    SQZ_DB_PATH: s.db,
    PYTHONDONTWRITEBYTECODE: "1",
  };
  return s;
}

/// `sqz init` in the project; its status and output.
export function sqzInit(sqz, s, env) {
  const init = run(sqz, ["init"], { cwd: s.project, env });
  if (init.status !== 0) throw new Error(`sqz init failed (${init.status}): ${init.stdout}${init.stderr}`);
  return { status: init.status, stdout: init.stdout, stderr: init.stderr };
}

/// The script with `{project}` filled in, and the file the fake model reads it from.
export function scriptSteps(script, s) {
  const steps = replaceInStrings(JSON.parse(fs.readFileSync(script, "utf8")), "{project}", s.project);
  const file = path.join(s.out, "steps.json");
  fs.writeFileSync(file, JSON.stringify(steps, null, 2));
  return { steps, file };
}
