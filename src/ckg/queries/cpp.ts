/** Definitions query for C++ (capture protocol: see `../extract.ts`). */
import { C_FUNCTIONS, C_TYPES } from "./c.ts";

export const CPP_QUERY = C_FUNCTIONS + C_TYPES + `
(function_definition
  declarator: (reference_declarator (function_declarator declarator: (_) @name))
  body: (_) @body) @def.function
(template_declaration [(function_definition) (class_specifier) (struct_specifier)] @wrapped) @outer

(class_specifier name: (_) @name body: (field_declaration_list) @body) @def.class

; Member functions declared in the class body and defined elsewhere (or pure virtual); a
; field declaration stands only in a class body (or a preprocessor conditional inside one).
(field_declaration
  declarator: [
    (function_declarator declarator: (_) @name)
    (pointer_declarator declarator: (function_declarator declarator: (_) @name))
    (reference_declarator (function_declarator declarator: (_) @name))
  ]) @def.prototype
(field_declaration_list
  (declaration
    declarator: [
      (function_declarator declarator: (_) @name)
      (pointer_declarator declarator: (function_declarator declarator: (_) @name))
      (reference_declarator (function_declarator declarator: (_) @name))
    ]) @def.prototype)
`;
