import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";

import { formatBytes, resultText } from "../../src/pool/calls/results.js";
import { truncateText } from "../../src/pool/core/truncate.js";

/** Base64 of `bytes` zero bytes. */
function base64Of(bytes: number): string {
  return Buffer.alloc(bytes).toString("base64");
}

function result(
  content: CallToolResult["content"],
  extra: Partial<CallToolResult> = {},
): CallToolResult {
  return { content, ...extra };
}

describe("resultText", () => {
  it("gives a text block as its text", () => {
    expect(resultText(result([{ type: "text", text: "hello" }]))).toBe("hello");
  });

  it("joins blocks with a newline", () => {
    const text = resultText(
      result([
        { type: "text", text: "one" },
        { type: "text", text: "two" },
      ]),
    );
    expect(text).toBe("one\ntwo");
  });

  it("gives an embedded text resource as the resource's own text", () => {
    const text = resultText(
      result([
        {
          type: "resource",
          resource: { uri: "file:///a.txt", mimeType: "text/plain", text: "contents" },
        },
      ]),
    );
    expect(text).toBe("contents");
  });

  it("names an embedded blob resource with its uri, mime type and decoded size", () => {
    const text = resultText(
      result([
        {
          type: "resource",
          resource: { uri: "file:///a.pdf", mimeType: "application/pdf", blob: base64Of(2048) },
        },
      ]),
    );
    expect(text).toBe("[resource file:///a.pdf application/pdf, 2 KB omitted]");
  });

  it("names a resource link with its uri, name and description", () => {
    const link = { type: "resource_link" as const, uri: "file:///notes.md", name: "notes" };
    expect(resultText(result([{ ...link, description: "Meeting notes" }]))).toBe(
      "[resource_link file:///notes.md — notes: Meeting notes]",
    );
    expect(resultText(result([link]))).toBe("[resource_link file:///notes.md — notes]");
  });

  it("names an image and an audio block with their mime type and decoded size", () => {
    expect(
      resultText(result([{ type: "image", mimeType: "image/png", data: base64Of(42 * 1024) }])),
    ).toBe("[image image/png, 42 KB omitted]");
    expect(
      resultText(result([{ type: "audio", mimeType: "audio/wav", data: base64Of(100) }])),
    ).toBe("[audio audio/wav, 100 B omitted]");
  });

  it("decodes the size of unpadded and padded base64 alike", () => {
    for (const bytes of [1, 2, 3, 4, 5]) {
      const padded = base64Of(bytes);
      const unpadded = padded.replace(/=+$/, "");
      expect(resultText(result([{ type: "image", mimeType: "image/png", data: padded }]))).toBe(
        `[image image/png, ${bytes} B omitted]`,
      );
      expect(resultText(result([{ type: "image", mimeType: "image/png", data: unpadded }]))).toBe(
        `[image image/png, ${bytes} B omitted]`,
      );
    }
  });

  it("names a block of an unknown type as that type's content", () => {
    const unknown = { type: "video", data: "AAAA" } as unknown as CallToolResult["content"][number];
    expect(resultText(result([unknown]))).toBe("[video content]");
  });

  it("flattens mixed blocks in order", () => {
    const text = resultText(
      result([
        { type: "text", text: "Here is the chart:" },
        { type: "image", mimeType: "image/png", data: base64Of(10) },
      ]),
    );
    expect(text).toBe("Here is the chart:\n[image image/png, 10 B omitted]");
  });

  it("gives a result with no content but structuredContent as compact JSON", () => {
    expect(resultText(result([], { structuredContent: { temperature: 21.5, unit: "C" } }))).toBe(
      '{"temperature":21.5,"unit":"C"}',
    );
  });

  it("lets text blocks win over a structure they do not mirror", () => {
    expect(
      resultText(
        result([{ type: "text", text: "It is 21.5 degrees." }], { structuredContent: { t: 21.5 } }),
      ),
    ).toBe("It is 21.5 degrees.");
    expect(
      resultText(result([{ type: "text", text: '{"t": 22}' }], { structuredContent: { t: 21.5 } })),
    ).toBe('{"t": 22}');
  });

  it("gives pretty-printed text that mirrors the structure as the compact JSON", () => {
    const structuredContent = { b: [1, 2], a: { nested: true } };
    const pretty = JSON.stringify({ a: { nested: true }, b: [1, 2] }, null, 2);
    expect(resultText(result([{ type: "text", text: pretty }], { structuredContent }))).toBe(
      '{"b":[1,2],"a":{"nested":true}}',
    );
  });

  it("keeps the other blocks beside a mirrored structure", () => {
    const structuredContent = { ok: true };
    const text = resultText(
      result(
        [
          { type: "text", text: '{\n  "ok": true\n}' },
          { type: "image", mimeType: "image/png", data: base64Of(3) },
        ],
        { structuredContent },
      ),
    );
    expect(text).toBe('{"ok":true}\n[image image/png, 3 B omitted]');
  });

  it("says (no output) when there is nothing at all", () => {
    expect(resultText(result([]))).toBe("(no output)");
    expect(resultText({} as CallToolResult)).toBe("(no output)");
  });

  it("falls back to the structure when the only text is empty", () => {
    expect(resultText(result([{ type: "text", text: "" }], { structuredContent: { a: 1 } }))).toBe(
      '{"a":1}',
    );
    expect(resultText(result([{ type: "text", text: "" }]))).toBe("(no output)");
  });
});

describe("formatBytes", () => {
  it("uses B below 1 KiB, rounded KB below 1 MiB and one decimal of MB above", () => {
    expect(formatBytes(0)).toBe("0 B");
    expect(formatBytes(1023)).toBe("1023 B");
    expect(formatBytes(1024)).toBe("1 KB");
    expect(formatBytes(1536)).toBe("2 KB");
    expect(formatBytes(42 * 1024 + 100)).toBe("42 KB");
    expect(formatBytes(1024 * 1024 - 1)).toBe("1.0 MB");
    expect(formatBytes(1024 * 1024)).toBe("1.0 MB");
    expect(formatBytes(3.45 * 1024 * 1024)).toBe("3.5 MB");
  });
});

describe("truncateText", () => {
  const text = "a".repeat(100_000) + "b".repeat(100_000) + "c".repeat(4_800);

  it("leaves text alone with no cap: 0, undefined, null, negative or Infinity", () => {
    for (const cap of [0, undefined, null, -5, Infinity, Number.NaN]) {
      expect(truncateText(text, cap)).toBe(text);
    }
  });

  it("leaves text within the cap alone", () => {
    expect(truncateText("short", 5)).toBe("short");
    expect(truncateText("short", 100)).toBe("short");
  });

  it("keeps two thirds of the budget from the head and a third from the tail around the marker", () => {
    const cut = truncateText(text, 16_000);
    const match = /^(a*)\n\[truncated: kept (\d+) of (\d+) chars\]\n([bc]*)$/.exec(cut);
    expect(match).not.toBeNull();
    const [, head, kept, total, tail] = match as unknown as [
      string,
      string,
      string,
      string,
      string,
    ];
    expect(Number(total)).toBe(text.length);
    expect(Number(kept)).toBe(head.length + tail.length);
    expect(head.length).toBe(Math.floor((Number(kept) * 2) / 3));
    expect(tail.length).toBe(Number(kept) - head.length);
    expect(text.startsWith(head)).toBe(true);
    expect(text.endsWith(tail)).toBe(true);
  });

  it("fits the whole output, marker included, in the cap", () => {
    const marker = `\n[truncated: kept 15959 of ${text.length} chars]\n`;
    const cut = truncateText(text, 16_000);
    expect(cut).toHaveLength(16_000);
    expect(cut).toContain(marker);
    expect(cut.length - marker.length).toBe(15_959);
  });

  it("spends every character it can when the kept count loses a digit", () => {
    // The marker for a 5-digit count is 40 chars, so 10036 − 40 = 9996 would be kept; but
    // a 4-digit count makes the marker 39, and 9997 + 39 fills the cap exactly.
    const cut = truncateText("x".repeat(20_000), 10_036);
    expect(cut).toContain("[truncated: kept 9997 of 20000 chars]");
    expect(cut).toHaveLength(10_036);
  });

  it("keeps nothing but the marker when the cap is smaller than the marker", () => {
    expect(truncateText("x".repeat(500), 10)).toBe("\n[truncated: kept 0 of 500 chars]\n");
  });

  it("never splits a surrogate pair", () => {
    const emoji = "😀".repeat(1000);
    const cut = truncateText(emoji, 500);
    const [head, tail] = cut.split(/\n\[truncated: kept \d+ of 2000 chars\]\n/);
    expect(head).toMatch(/^(😀)*$/u);
    expect(tail).toMatch(/^(😀)*$/u);
    const kept = Number(/kept (\d+) of/.exec(cut)?.[1]);
    expect(kept).toBe((head ?? "").length + (tail ?? "").length);
  });
});
