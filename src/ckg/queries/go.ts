/** Definitions query for Go (capture protocol: see `../extract.ts`). */
export const GO_QUERY = `
(function_declaration name: (identifier) @name body: (block)? @body) @def.function
(method_declaration
  receiver: (parameter_list (parameter_declaration type: (_) @class))
  name: (field_identifier) @name
  body: (block)? @body) @def.method

; A single "type X ..." takes the whole declaration; a grouped "type ( ... )" keeps each spec.
(type_declaration [(type_spec) (type_alias)] @wrapped) @outer
(type_spec name: (type_identifier) @name type: (struct_type)) @def.class.struct
(type_spec name: (type_identifier) @name type: (interface_type)) @def.class.interface
(type_spec name: (type_identifier) @name) @def.class.type
(type_alias name: (type_identifier) @name) @def.class.type

(interface_type (method_elem name: (field_identifier) @name) @def.method)
(field_declaration_list (field_declaration name: (field_identifier) @name) @def.field)
; Embedded fields have no name: the type names them.
(field_declaration_list (field_declaration !name type: (_) @name) @def.field)

; Function literals bound to one name.
(short_var_declaration
  left: (expression_list . (identifier) @name .)
  right: (expression_list . (func_literal body: (block) @body) .)) @def.function
(var_spec
  name: (identifier) @name
  value: (expression_list . (func_literal body: (block) @body) .)) @def.function
`;
