/**
 * A server's elicitation and sampling requests go on to the host as the server sent them:
 * the pool checks them as the SDK's client does, but the host gets neither a field the
 * schema would drop (a form's `requestedSchema.$schema`, an extension key) nor one it
 * would fill in (`mode`).
 */
import { describe, expect, it } from "vitest";

import { checkedElicitation, checkedSampling } from "../../src/pool/mcp/server-requests.js";

const FORM = {
  method: "elicitation/create",
  params: {
    message: "proceed?",
    requestedSchema: {
      $schema: "https://json-schema.org/draft/2020-12/schema",
      type: "object",
      properties: { ok: { type: "boolean", default: true } },
    },
    _meta: { "example.com/trace": "t1" },
  },
};

const URL_ASK = {
  method: "elicitation/create",
  params: {
    mode: "url",
    message: "Please open the link.",
    url: "https://example.com/",
    elicitationId: "e-1",
  },
};

describe("a server's questions, as it sent them", () => {
  it("gives a form elicitation to the host without adding a mode or dropping $schema", async () => {
    let asked: unknown;
    const answer = await checkedElicitation(FORM, { form: {} }, (params) => {
      asked = params;
      return { action: "accept", content: {} };
    });
    expect(asked).toEqual(FORM.params);
    // The form's defaults are still filled in, as the SDK's client does.
    expect(answer).toEqual({ action: "accept", content: { ok: true } });
  });

  it("keeps a url elicitation's elicitationId", async () => {
    let asked: unknown;
    await checkedElicitation(URL_ASK, { url: {} }, (params) => {
      asked = params;
      return { action: "decline" };
    });
    expect(asked).toEqual(URL_ASK.params);
  });

  it("still refuses a mode the pool did not declare", async () => {
    await expect(checkedElicitation(URL_ASK, { form: {} }, () => ({}))).rejects.toThrow(
      "Client does not support URL-mode elicitation requests",
    );
    await expect(checkedElicitation(FORM, { url: {} }, () => ({}))).rejects.toThrow(
      "Client does not support form-mode elicitation requests",
    );
  });

  it("gives a sampling request to the host with the keys the schema does not name", async () => {
    const request = {
      method: "sampling/createMessage",
      params: {
        messages: [{ role: "user", content: { type: "text", text: "hi" } }],
        maxTokens: 10,
        "example.com/hint": "kept",
      },
    };
    let asked: unknown;
    await checkedSampling(request, (params) => {
      asked = params;
      return { role: "assistant", content: { type: "text", text: "ok" }, model: "m" };
    });
    expect(asked).toEqual(request.params);
  });
});
