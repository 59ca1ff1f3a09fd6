// A tool's JSON schema from the example worlds' tool definitions ({ parameters, required }).
export function jsonSchema(tool) {
  return { type: 'object', properties: tool.parameters, required: tool.required, additionalProperties: false };
}
