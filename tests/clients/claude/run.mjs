// Runs the real Claude Code client headless through script.json against the scripted model on
// loopback, and writes OUT/report.json: per tool call, what the model saw in the next request.
//
//   node run.mjs --out DIR --variant baseline|sqz|proxy --mode default|bypassPermissions
//                --sqz PATH --canary SECRET [--claude PATH]
//
// baseline: no sqz set up. sqz: `sqz init` in the project first (hooks, allow rules).
// proxy: no hooks; ANTHROPIC_BASE_URL is `sqz proxy --upstream` in front of the model.
// The scratch HOME has what a user of the project would have: allow rules of their own for
// python3, `sed -i` and edits, and the project marked trusted (as after answering the trust
// dialog once). Every path the run writes is under DIR.

import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import {
  startFakeModel,
  startSqzProxy,
  runAsync,
  readJsonLines,
  scriptedCalls,
  historyChanges,
} from "../lib/harness.mjs";
import { makeProject } from "../lib/project.mjs";
import { scratch, sqzInit, scriptSteps } from "./scratch.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));

function options(argv) {
  const out = {};
  for (let i = 0; i < argv.length; i += 2) out[argv[i].replace(/^--/, "")] = argv[i + 1];
  for (const key of ["out", "variant", "mode", "sqz", "canary"])
    if (!out[key]) throw new Error(`run.mjs: --${key} is required`);
  if (!["baseline", "sqz", "proxy"].includes(out.variant))
    throw new Error(`run.mjs: --variant must be baseline, sqz or proxy, not ${out.variant}`);
  if (!["default", "bypassPermissions"].includes(out.mode))
    throw new Error(`run.mjs: --mode must be default or bypassPermissions, not ${out.mode}`);
  out.trusted ??= "yes";
  if (!["yes", "no"].includes(out.trusted))
    throw new Error(`run.mjs: --trusted must be yes or no, not ${out.trusted}`);
  out.sqz = path.resolve(out.sqz);
  out.claude ??= path.join(here, "node_modules", ".bin", "claude");
  out.script ??= path.join(here, "script.json");
  return out;
}

// What differs between two runs only by accident: the scratch directory, the session id, the
// client's random name for a saved output, the test runner's timing.
function normalize(text, out) {
  // The client names its per-project folder after the path with every other character a dash.
  const dashed = out.replace(/[^A-Za-z0-9]/g, "-");
  return text
    .split(out)
    .join("/scratch")
    .split(dashed)
    .join("-scratch")
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, "00000000-0000-0000-0000-000000000000")
    .replace(/tool-results\/[A-Za-z0-9_]+\.txt/g, "tool-results/saved.txt")
    .replace(/(Ran \d+ tests? in )\d+\.\d+s/g, "$10.000s");
}

async function main() {
  const o = options(process.argv.slice(2));
  const out = path.resolve(o.out);
  const scratchDir = scratch({ out, sqz: o.sqz, claude: o.claude });
  const { home, project, db } = scratchDir;

  const allow = ["Bash(python3:*)", "Bash(sed -i:*)", "Edit"];
  // A proxy user runs no `sqz init`; the README tells them to allow `sqz expand` themselves.
  if (o.variant === "proxy") allow.push("Bash(sqz expand:*)");
  fs.writeFileSync(
    path.join(home, ".claude", "settings.json"),
    JSON.stringify({ permissions: { allow } }, null, 2),
  );
  // Untrusted: the folder was never opened in the interactive client, so Claude Code drops the
  // project's allow rules (those `sqz init` wrote among them) while it still runs its hooks.
  const projects = o.trusted === "yes" ? { [project]: { hasTrustDialogAccepted: true } } : {};
  fs.writeFileSync(path.join(home, ".claude.json"), JSON.stringify({ projects }, null, 2));
  makeProject(project, { home, canary: o.canary });

  const env = { ...scratchDir.env, TERM: "dumb" };
  const init = o.variant === "sqz" ? sqzInit(o.sqz, scratchDir, env) : null;

  const { steps, file: stepsFile } = scriptSteps(o.script, scratchDir);
  const log = path.join(out, "requests.jsonl");
  const model = await startFakeModel({ script: stepsFile, log });
  let proxy = null;
  let base = `http://127.0.0.1:${model.port}`;
  if (o.variant === "proxy") {
    proxy = await startSqzProxy({ sqz: o.sqz, upstream: base, env });
    base = `http://127.0.0.1:${proxy.port}`;
  }

  const claudeEnv = {
    ...env,
    ANTHROPIC_BASE_URL: base,
    ANTHROPIC_API_KEY: "sk-ant-scripted-model-0000",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    DISABLE_AUTOUPDATER: "1",
    DISABLE_TELEMETRY: "1",
    DISABLE_ERROR_REPORTING: "1",
  };
  const args = [
    "-p",
    "Work through the scripted steps.",
    "--output-format",
    "stream-json",
    "--verbose",
    "--include-hook-events",
    "--debug-file",
    path.join(out, "debug.log"),
    "--tools",
    "Bash,Read,Edit,Write,Grep,Glob",
  ];
  if (o.mode === "bypassPermissions") {
    // As root the client takes bypassPermissions only inside a declared sandbox.
    claudeEnv.IS_SANDBOX = "1";
    args.push("--permission-mode", "bypassPermissions");
  }
  const started = Date.now();
  const claude = await runAsync(o.claude, args, { cwd: project, env: claudeEnv, timeoutMs: 300000 });
  const seconds = (Date.now() - started) / 1000;
  await model.stop();
  if (proxy) await proxy.stop();
  fs.writeFileSync(path.join(out, "stream.jsonl"), claude.stdout);

  const stream = claude.stdout
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l));
  const result = stream.find((e) => e.type === "result") ?? null;
  const denials = new Map((result?.permission_denials ?? []).map((d) => [d.tool_use_id, d]));
  // A hook event carries no tool_use_id: it belongs to the tool call streamed last before it.
  let current = null;
  const hookRuns = [];
  for (const e of stream) {
    if (e.type === "assistant")
      for (const b of e.message?.content ?? []) if (b.type === "tool_use") current = b.id;
    if (e.type === "system" && e.subtype === "hook_response") hookRuns.push({ ...e, tool_use_id: current });
  }
  const hookErrors = hookRuns
    .filter((e) => e.outcome !== "success" || e.exit_code !== 0 || (e.stderr ?? "").trim() !== "")
    .map((e) => ({
      tool_use_id: e.tool_use_id,
      hook: e.hook_name,
      outcome: e.outcome,
      exit_code: e.exit_code,
      stderr: e.stderr ?? "",
      output: (e.output ?? "").slice(0, 400),
    }));

  const requests = readJsonLines(log);
  const calls = scriptedCalls(steps, requests).map((call) => ({
    ...call,
    normalized: call.answered ? normalize(call.text, out) : "",
    denied: denials.has(call.id),
  }));

  const report = {
    client: "claude-code",
    variant: o.variant,
    mode: o.mode,
    out,
    store: path.dirname(db),
    init,
    claude: {
      status: claude.status,
      signal: claude.signal,
      timed_out: claude.timedOut,
      seconds,
      stderr: claude.stderr.slice(-4000),
      result: result && { subtype: result.subtype, is_error: result.is_error, num_turns: result.num_turns },
    },
    requests: requests.length,
    main_requests: requests.filter((r) => r.main).length,
    side_requests: requests.filter((r) => !r.main).map((r) => r.path),
    hook_runs: hookRuns.length,
    hook_errors: hookErrors,
    calls,
    history: historyChanges(requests),
    proxy_output: proxy ? proxy.output().slice(-4000) : null,
  };
  fs.writeFileSync(path.join(out, "report.json"), JSON.stringify(report, null, 2));
  process.stdout.write(`report ${path.join(out, "report.json")}\n`);
}

main().catch((e) => {
  process.stderr.write(`run.mjs: ${e.stack ?? e}\n`);
  process.exit(1);
});
