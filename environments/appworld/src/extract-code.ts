/** The code of the first ```python block of an answer (the AgentJet AppWorld recipe), or undefined. */
export function extractPythonCode(answer: string): string | undefined {
  const start = answer.search(/```python[^\S\n]*\n/);
  if (start < 0) return undefined;
  const body = answer.slice(answer.indexOf("\n", start) + 1);
  const end = body.indexOf("```");
  return (end < 0 ? body : body.slice(0, end)).replace(/\s+$/, "");
}
