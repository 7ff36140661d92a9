/** Definitions query for Python (capture protocol: see `../extract.ts`). */
export const PYTHON_QUERY = `
(function_definition
  name: (identifier) @name
  body: (block) @body) @def.function

(decorated_definition definition: (_) @wrapped) @outer

(class_definition
  name: (identifier) @name
  body: (block) @body) @def.class

; A lambda bound to a name is a function of that name: \`H = lambda x: ...\`.
(expression_statement
  (assignment left: (identifier) @name right: (lambda body: (_) @body)) @def.function)

; Class attributes are the assignments made directly in the class body.
(class_definition
  body: (block
    (expression_statement
      (assignment left: (identifier) @name) @def.field)))
`;
