/**
 * 1 for exactly the right number. Below that, credit for the parts a tiny model learns first: 0.5 when
 * the reply starts with the right number but has more after it, 0.1 when it starts with another number,
 * 0 otherwise. Each level is reachable by chance from the one below, so random-init RL gets a signal.
 */
export function scoreReply(reply: string, answer: number): { reward: number; wellFormed: boolean; correct: boolean } {
  const text = reply.trim();
  const wellFormed = /^-?\d{1,6}$/.test(text);
  const correct = wellFormed && Number(text) === answer;
  const leading = /^-?\d{1,6}/.exec(text)?.[0];
  const reward = correct ? 1 : leading === undefined ? 0 : Number(leading) === answer ? 0.5 : 0.1;
  return { reward, wellFormed, correct };
}
