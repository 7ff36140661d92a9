/** Definitions query for C (capture protocol: see `../extract.ts`). */

/** Function definitions, shared with C++: the name sits at the bottom of a declarator chain. */
export const C_FUNCTIONS = `
(function_definition
  declarator: (function_declarator declarator: (_) @name)
  body: (_) @body) @def.function
(function_definition
  declarator: (pointer_declarator declarator: (function_declarator declarator: (_) @name))
  body: (_) @body) @def.function
(function_definition
  declarator: (pointer_declarator
    declarator: (pointer_declarator declarator: (function_declarator declarator: (_) @name)))
  body: (_) @body) @def.function
; Any other declarator shape (e.g. a function returning a function pointer): the name is read
; from the declarator text.
(function_definition declarator: (_) @declarator body: (_) @body) @def.function
`;

/** Structs, unions, enums and their members, shared with C++. */
export const C_TYPES = `
(struct_specifier name: (_) @name body: (field_declaration_list) @body) @def.class.struct
(union_specifier name: (_) @name body: (field_declaration_list) @body) @def.class.union
(enum_specifier name: (_) @name body: (enumerator_list) @body) @def.class.enum

; typedef struct { ... } name;
(type_definition
  type: (struct_specifier body: (field_declaration_list) @body)
  declarator: (type_identifier) @name) @def.class.struct
(type_definition
  type: (union_specifier body: (field_declaration_list) @body)
  declarator: (type_identifier) @name) @def.class.union
(type_definition
  type: (enum_specifier body: (enumerator_list) @body)
  declarator: (type_identifier) @name) @def.class.enum

(field_declaration_list (field_declaration declarator: (_) @declarator) @def.field)
(enumerator_list (enumerator name: (_) @name) @def.field)
`;

/** The whole C query. */
export const C_QUERY = C_FUNCTIONS + C_TYPES;
