import { describe, expect, it } from "vitest";
import { SubsetShell } from "../../../environments/appworld/stand-in/interpreter.ts";

describe("the stand-in's code subset (test double of AppWorld's shell)", () => {
  it("keeps variables across runs and prints like AppWorld's print", () => {
    const shell = new SubsetShell({});
    expect(shell.run('x = {"a": [1, -2.5, True, None], "b": "hi"}')).toBe("Execution successful.");
    expect(shell.run("print(x)")).toBe('{"a": [1, -2.5, true, null], "b": "hi"}\n');
    expect(shell.run('print(x["b"], len(x["a"]), x["a"][-1], str(3))')).toBe("hi 4 None 3\n");
    expect(shell.run('print([\n  "a",\n  "b",\n])  # a comment')).toBe('["a", "b"]\n');
    const long = shell.run(`print(${JSON.stringify(Array.from({ length: 30 }, (_, i) => i))})`);
    expect(long.startsWith("[\n 0,\n 1,")).toBe(true);
  });

  it("answers what it cannot run with AppWorld's failure texts", () => {
    const shell = new SubsetShell({});
    expect(shell.run("if x:\n  pass")).toMatch(/^Execution failed. Traceback:\nSyntax error in line:\nif x:\nMessage: /);
    expect(shell.run("x = 1 + 2")).toMatch(/Syntax error in line:\nx = 1 \+ 2/);
    expect(shell.run('print("a")\ny[0]')).toBe('Execution failed. Traceback:\n  File "<python-input>", line 2, in <module>\n    y[0]\nNameError: name \'y\' is not defined');
    expect(shell.run("x = [1]\nx[3]")).toMatch(/IndexError: list index out of range$/);
    expect(shell.run("x = 1\nx()")).toMatch(/TypeError: 'int' object is not callable$/);
    expect(shell.run('x = "unterminated')).toMatch(/unterminated string literal/);
  });
});
