/** Definitions query for JavaScript and JSX (capture protocol: see `../extract.ts`). */

/** Patterns the JavaScript and TypeScript grammars share. */
export const JS_COMMON = `
(function_declaration name: (identifier) @name body: (_) @body) @def.function
(generator_function_declaration name: (identifier) @name body: (_) @body) @def.function

; const f = () => {}, let g = function () {}: the binding names the function.
(variable_declarator
  name: (identifier) @name
  value: [
    (arrow_function body: (_) @body)
    (function_expression body: (_) @body)
    (generator_function body: (_) @body)
  ]) @def.function
(lexical_declaration (variable_declarator) @wrapped) @outer
(variable_declaration (variable_declarator) @wrapped) @outer
(export_statement declaration: (_) @wrapped) @outer

; f = function () {}, exports.f = () => {}, Cls.prototype.m = function () {}
(assignment_expression
  left: [
    (identifier) @name
    (member_expression property: (property_identifier) @name)
  ]
  right: [
    (arrow_function body: (_) @body)
    (function_expression body: (_) @body)
    (generator_function body: (_) @body)
  ]
  (#not-eq? @name "exports")) @def.function
(assignment_expression
  left: (member_expression
    object: (member_expression
      object: (identifier) @class
      property: (property_identifier) @_prototype)
    property: (property_identifier) @name)
  right: [(arrow_function) (function_expression) (generator_function)]
  (#eq? @_prototype "prototype")) @def.method
(expression_statement (assignment_expression) @wrapped) @outer

; Object literal members: { get() {}, post: () => {} }
(object (method_definition name: (_) @name body: (_) @body) @def.function)
(object
  (pair
    key: [(property_identifier) (string) (number)] @name
    value: [
      (arrow_function body: (_) @body)
      (function_expression body: (_) @body)
      (generator_function body: (_) @body)
    ]) @def.function)

; Named function expressions that nothing binds: \`return function jsonParser() {}\`,
; callbacks such as \`ws.once("close", function close() {})\`. One bound to a name is known
; by the binding's name alone (see \`extract.ts\`).
(function_expression name: (identifier) @name body: (_) @body) @def.function.expression
(generator_function name: (identifier) @name body: (_) @body) @def.function.expression

(class_declaration name: (_) @name body: (class_body) @body) @def.class
(variable_declarator name: (identifier) @name value: (class body: (class_body) @body)) @def.class

(class_body (method_definition name: (_) @name body: (_) @body) @def.method)
`;

export const JAVASCRIPT_QUERY = JS_COMMON + `
(class_body
  (field_definition
    property: (_) @name
    value: [
      (arrow_function body: (_) @body)
      (function_expression body: (_) @body)
      (generator_function body: (_) @body)
    ]) @def.method)
(class_body (field_definition property: (_) @name) @def.field)
`;
