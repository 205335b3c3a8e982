// Type-only imports from the SDK: an installed plugin lives outside this repository, and types leave no import behind.
import type { EnvironmentDefinition, EpisodeDynamics } from "../../../sdk/env/define-environment.ts";
import type { Turn } from "../../../sdk/env/protocol.ts";
import { type GuessGame, generateGuessTasks, readGame, readGuess, rewardOf } from "./game.ts";

const AGENT = "guesser";

function ask(content: string): Turn {
  return { observations: { [AGENT]: { messages: [{ role: "user", content }] } }, done: false };
}

function createEpisode(): EpisodeDynamics {
  let game: GuessGame | null = null;
  let turns = 0;
  let wellFormed = 0;
  let finished: Turn | null = null;
  const finish = (won: boolean, extra: Record<string, unknown>): Turn => {
    finished = {
      observations: {},
      done: true,
      rewards: { [AGENT]: rewardOf(won, turns, wellFormed) },
      info: { won, turns, wellFormed, secret: game?.secret, ...extra },
    };
    return finished;
  };
  return {
    reset({ task }) {
      game = readGame(task.data);
      turns = 0;
      wellFormed = 0;
      finished = null;
      if (game === null) return finish(false, { error: "invalid task data" });
      return ask(`guess 1-${game.max}`);
    },
    step({ actions }) {
      if (finished !== null) return finished;
      if (game === null) return finish(false, { error: "step before reset" });
      turns++;
      const guess = readGuess(actions[AGENT] ?? "");
      if (guess !== null) wellFormed++;
      if (guess === game.secret) return finish(true, {});
      if (turns >= game.maxTurns) return finish(false, { lastGuess: guess });
      if (guess === null) return ask("a number");
      return ask(guess < game.secret ? "higher" : "lower");
    },
  };
}

export const environment: EnvironmentDefinition = {
  createEpisode,
  generateTasks: ({ split, seed, count }) => generateGuessTasks(split, seed, count),
  solve({ task }) {
    const game = readGame(task.data);
    return game === null ? "" : String(game.secret);
  },
};
