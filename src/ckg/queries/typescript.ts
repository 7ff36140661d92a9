/** Definitions query for TypeScript and TSX (capture protocol: see `../extract.ts`). */
import { JS_COMMON } from "./javascript.ts";

export const TYPESCRIPT_QUERY = JS_COMMON + `
(abstract_class_declaration name: (_) @name body: (class_body) @body) @def.class
(interface_declaration name: (_) @name body: (interface_body) @body) @def.class.interface
(enum_declaration name: (_) @name body: (enum_body) @body) @def.class.enum
(type_alias_declaration name: (_) @name) @def.class.type

; Overload signatures and ambient declarations have no body but are all a reader gets.
(function_signature name: (identifier) @name) @def.function
(class_body (method_signature name: (_) @name) @def.method)
(class_body (abstract_method_signature name: (_) @name) @def.method)
(interface_body (method_signature name: (_) @name) @def.method)

(class_body
  (public_field_definition
    name: (_) @name
    value: [
      (arrow_function body: (_) @body)
      (function_expression body: (_) @body)
      (generator_function body: (_) @body)
    ]) @def.method)
(class_body (public_field_definition name: (_) @name) @def.field)
(interface_body (property_signature name: (_) @name) @def.field)
(type_alias_declaration value: (object_type (property_signature name: (_) @name) @def.field))
(enum_body (property_identifier) @name @def.field)
(enum_body (enum_assignment name: (_) @name) @def.field)
`;
