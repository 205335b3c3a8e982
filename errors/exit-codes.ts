/** Exit codes of every `agentjet` command. A code's row in `codes.json` says which one it exits with. */
export const EXIT = {
  ok: 0,
  failure: 1,
  usage: 2,
  notFound: 3,
  integrity: 4,
  interrupted: 130,
} as const;
