/** 1 for the right number, 0.1 for a number that is wrong (the format is learnt first), 0 otherwise. */
export function scoreReply(reply: string, answer: number): { reward: number; wellFormed: boolean; correct: boolean } {
  const text = reply.trim();
  const wellFormed = /^-?\d{1,6}$/.test(text);
  const correct = wellFormed && Number(text) === answer;
  return { reward: correct ? 1 : wellFormed ? 0.1 : 0, wellFormed, correct };
}
