import { describe, expect, it } from "vitest";
import { externalString } from "../../../server/app/external-string.ts";

// The addon is built by `npm ci` (package.json's install script); AGENTJET_NO_NATIVE=1 turns it off.
describe.skipIf(process.env.AGENTJET_NO_NATIVE === "1")("externalString (server/app/native)", () => {
  it("is built", () => {
    expect(externalString).not.toBeNull();
  });

  it("reads a Uint8Array of shared memory as Latin-1 and a Uint16Array as UTF-16, every unit as it is", () => {
    const bytes = new Uint8Array(new SharedArrayBuffer(256));
    for (let i = 0; i < 256; i++) bytes[i] = i;
    const latin1 = externalString!(bytes);
    expect(latin1).toBe(Array.from({ length: 256 }, (_, i) => String.fromCharCode(i)).join(""));
    const text = "数学 ✓ 🙂 \ud800 end";
    const units = new Uint16Array(new SharedArrayBuffer(2 * text.length));
    for (let i = 0; i < text.length; i++) units[i] = text.charCodeAt(i);
    expect(externalString!(units)).toBe(text);
    // a view of part of the memory is that part
    expect(externalString!(new Uint8Array(bytes.buffer, 65, 3))).toBe("ABC");
  });

  it("gives a string that behaves as any other (slices, joins, JSON, comparison)", () => {
    const n = 1 << 20;
    const bytes = new Uint8Array(new SharedArrayBuffer(n)).fill(0x61);
    bytes[n - 1] = 0xe9;
    const s = externalString!(bytes);
    expect(s.length).toBe(n);
    expect(s === `${"a".repeat(n - 1)}é`).toBe(true);
    expect(s.slice(n - 3)).toBe("aaé");
    expect(JSON.parse(JSON.stringify({ s })).s).toBe(s);
    expect(Buffer.byteLength(s)).toBe(n + 1);
  });

  it("refuses memory that could be moved away under the string (an ArrayBuffer), and other views", () => {
    expect(() => externalString!(new Uint8Array(8))).toThrow(/SharedArrayBuffer/);
    expect(() => externalString!(new Int32Array(new SharedArrayBuffer(8)) as unknown as Uint8Array)).toThrow(/Uint8Array/);
  });
});
