import type { AppWorldTaskInfo } from "./appworld-client.ts";

/** The system message: how to act in AppWorld, plus the app list the world itself reports. */
export function systemPrompt(appDescriptions: string, maxSteps: number): string {
  return [
    "You are an agent that completes day-to-day tasks for your supervisor by writing Python code against the apps of AppWorld.",
    "Each turn, answer with exactly one ```python code block. It runs in a stateful shell (variables persist) and you see its printed output.",
    "Call app APIs as `apis.<app>.<api>(...)`. Explore them with `apis.api_docs.show_api_descriptions(app_name=...)` and `apis.api_docs.show_api_doc(app_name=..., api_name=...)`.",
    "Your supervisor's own details come from `apis.supervisor.show_profile()`.",
    "When the task is done, call `apis.supervisor.complete_task()`, with `answer=...` when the task asks a question.",
    `You have at most ${maxSteps} turns.`,
    "",
    "The apps:",
    appDescriptions.trim(),
  ].join("\n");
}

/** The first user message: who the supervisor is and what they ask. */
export function taskPrompt(info: AppWorldTaskInfo): string {
  const s = info.supervisor;
  return [
    `My name is ${s.first_name} ${s.last_name}. My personal email is ${s.email} and phone number is ${s.phone_number}.`,
    `It is ${info.datetime}.`,
    `Task: ${info.instruction}`,
  ].join("\n");
}

const MAX_OUTPUT_CHARS = 20_000;

/** The user message after a turn: the execution output (capped), or why nothing ran. */
export function outputMessage(output: string | undefined): string {
  if (output === undefined) return "No ```python code block found in your answer. Answer with one ```python ... ``` block.";
  const capped = output.length > MAX_OUTPUT_CHARS ? `${output.slice(0, MAX_OUTPUT_CHARS)}\n... (output truncated at ${MAX_OUTPUT_CHARS} characters)` : output;
  return `Output:\n\`\`\`\n${capped}\n\`\`\``;
}
