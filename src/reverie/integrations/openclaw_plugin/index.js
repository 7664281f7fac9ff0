// Reverie as OpenClaw's memory plugin (plugins.slots.memory = "reverie"), written with
// its manifest and tools.json by `reverie install openclaw`. It runs inside the Gateway
// (Node) and calls the `reverie` command named in the plugin's config, with Reverie's
// workspace and state folder; a running `reverie serve` answers the per-turn context.
//
// - before_prompt_build: the turn's context (fired triggers, the USER.md directives that
//   bear on it, fired intents) before the prompt, and on a session's first turn the
//   bootstrap too (`reverie hook user-prompt-submit`, `reverie hook session-start`);
// - agent_end: the run's messages (from the turn's user message on) recorded into a
//   Reverie session (`reverie session record`), which computes every origin: a user
//   message is the owner's only when OpenClaw's ingress says its sender is the owner
//   (senderIsOwner, read where the run's tools are made), anyone else's is a member's
//   (untrusted); another tool's results are untrusted and a reply after one is
//   tainted; our own tools' answers are recorded as recalled memory (never evidence);
// - the four memory tools, one definition with every other door (`reverie tool NAME`).
//   The taint rule of every door: once another tool's output reached the model in a
//   run, a memory_write is untrusted. A note is written as the agent's only on the
//   evidence: the owner speaks, OpenClaw reported this very call to the plugin
//   (before_tool_call: the runtime reports tool calls) and no other tool's result
//   (after_tool_call) came in the run; anything less is untrusted: fail closed.
//
// Memory failures never block a turn: a command that fails or runs past its timeout
// adds no context and is logged.

import { execFile } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const TIMEOUT_MS = 12000; // within before_prompt_build's 15 s budget
const RECORD_TIMEOUT_MS = 25000; // within agent_end's 30 s budget

function run(command, args, input, timeoutMs, log) {
  return new Promise((resolve) => {
    if (!Array.isArray(command) || command.length === 0) {
      log.warn?.("reverie: no command configured (run `reverie install openclaw`)");
      resolve(null);
      return;
    }
    const child = execFile(
      command[0],
      [...command.slice(1), ...args],
      { timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024, encoding: "utf8" },
      (error, stdout, stderr) => {
        if (error) {
          const why = String(stderr || error.message).trim().split("\n").pop();
          log.warn?.(`reverie ${args.slice(0, 2).join(" ")}: ${why}`);
          resolve(null);
          return;
        }
        resolve(stdout);
      },
    );
    child.stdin.on("error", () => {});
    child.stdin.end(input);
  });
}

function text(content) {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .filter((part) => part && part.type === "text" && typeof part.text === "string")
    .map((part) => part.text)
    .join("\n");
}

function context(stdout) {
  try {
    return JSON.parse(stdout).hookSpecificOutput.additionalContext || "";
  } catch {
    return "";
  }
}

const ROLES = { user: "user", assistant: "assistant", toolResult: "tool", tool: "tool" };

export default {
  id: "reverie",
  name: "Reverie",
  description: "Durable, inspectable, poisoning-resistant memory in Markdown files.",
  kind: "memory",
  register(api) {
    const config = api.pluginConfig || {};
    const command = config.command;
    const log = api.logger || console;
    const tools = JSON.parse(fs.readFileSync(path.join(HERE, "tools.json"), "utf8"));
    const names = new Set(tools.map((tool) => tool.name));
    // who is speaking in each session, as OpenClaw's ingress authenticated it (the tool
    // factory's context is built for each run before the model is called)
    const speakers = new Map();
    const hooked = new Set(); // sessions whose current memory-tool call OpenClaw reported
    const tainted = new Set(); // sessions where another tool's result reached the model
    const mark = (set, key) => {
      if (set.size >= 1000) set.delete(set.values().next().value); // bounded
      set.add(key);
    };
    api.on("before_tool_call", (event, ctx) => {
      if (ctx?.sessionId && names.has(event?.toolName)) mark(hooked, String(ctx.sessionId));
    });
    api.on("after_tool_call", (event, ctx) => {
      if (ctx?.sessionId && !names.has(event?.toolName)) mark(tainted, String(ctx.sessionId));
    });
    const memoryTools = (toolContext) => {
      if (toolContext?.sessionId) {
        if (speakers.size >= 1000) speakers.delete(speakers.keys().next().value); // bounded
        speakers.set(String(toolContext.sessionId), {
          owner: toolContext.senderIsOwner === true,
          sender: String(toolContext.requesterSenderId || "unknown"),
        });
      }
      return tools.map((tool) => ({
        name: tool.name,
        description: tool.description,
        parameters: tool.parameters,
        async execute(_id, params) {
          const sid = String(toolContext?.sessionId || "");
          const clean =
            sid !== "" &&
            toolContext?.senderIsOwner === true &&
            hooked.has(sid) &&
            !tainted.has(sid);
          hooked.delete(sid);
          const args = ["tool", tool.name, ...(clean ? [] : ["--tainted"])];
          const out = await run(command, args, JSON.stringify(params || {}), TIMEOUT_MS, log);
          const answer = out === null ? `${tool.name}: memory is unavailable right now` : out.trim();
          return { content: [{ type: "text", text: answer }] };
        },
      }));
    };
    api.registerTool(memoryTools, { names: tools.map((tool) => tool.name) });

    api.on("before_prompt_build", async (event, ctx) => {
      const messages = Array.isArray(event.messages) ? event.messages : [];
      const users = messages.filter((m) => m && m.role === "user");
      const prompt =
        typeof event.currentUserMessage === "string"
          ? event.currentUserMessage
          : text(users.length ? users[users.length - 1].content : event.prompt);
      const payload = JSON.stringify({ prompt, cwd: ctx.workspaceDir || process.cwd() });
      const blocks = [];
      if (!messages.some((m) => m && m.role === "assistant")) {
        const boot = await run(command, ["hook", "session-start"], "{}", TIMEOUT_MS, log);
        if (boot) blocks.push(context(boot));
      }
      const turn = await run(command, ["hook", "user-prompt-submit"], payload, TIMEOUT_MS, log);
      if (turn) blocks.push(context(turn));
      const joined = blocks.filter(Boolean).join("\n\n");
      return joined ? { prependContext: joined } : undefined;
    });

    api.on("agent_end", async (event, ctx) => {
      tainted.delete(String(ctx.sessionId)); // the next run starts clean
      if (ctx.trigger && ctx.trigger !== "user") return; // cron, heartbeat: nothing recorded
      const messages = Array.isArray(event.messages) ? event.messages : [];
      let start = messages.length;
      while (start > 0 && messages[start - 1]?.role !== "user") start -= 1;
      start = Math.max(0, start - 1); // this run: from its user message on
      const turns = [];
      for (const m of messages.slice(start)) {
        const ours = m?.role === "toolResult" && names.has(m.toolName);
        const role = ours ? "recalled" : ROLES[m?.role];
        const body = text(m?.content);
        if (!role || !body.trim()) continue;
        const entry = { role, content: body };
        if (role === "user") {
          const who = speakers.get(String(ctx.sessionId));
          const owner = m.__openclaw?.senderIsOwner === true || who?.owner === true;
          entry.sender = owner ? "owner" : `openclaw:${who?.sender || ctx.senderId || "unknown"}`;
        }
        turns.push(entry);
      }
      if (!turns.length) return;
      const id = String(ctx.sessionId || ctx.sessionKey || "session").replace(/[^A-Za-z0-9_.-]/g, "-");
      const session = `openclaw-${id}`.slice(0, 64);
      const args = ["session", "record", "--session", session, "--owner", "owner", "--ingest"];
      await run(command, args, JSON.stringify(turns), RECORD_TIMEOUT_MS, log);
    });
  },
};
