/** Definitions query for Java (capture protocol: see `../extract.ts`). */
export const JAVA_QUERY = `
(class_declaration name: (identifier) @name body: (_) @body) @def.class
(interface_declaration name: (identifier) @name body: (_) @body) @def.class.interface
(enum_declaration name: (identifier) @name body: (_) @body) @def.class.enum
(record_declaration name: (identifier) @name body: (_) @body) @def.class.record
(annotation_type_declaration name: (identifier) @name body: (_) @body) @def.class.annotation

(method_declaration name: (identifier) @name body: (_)? @body) @def.method
(constructor_declaration name: (identifier) @name body: (_) @body) @def.method
(compact_constructor_declaration name: (identifier) @name body: (_) @body) @def.method
(annotation_type_element_declaration name: (identifier) @name) @def.method

(field_declaration declarator: (variable_declarator name: (identifier) @name)) @def.field
(constant_declaration declarator: (variable_declarator name: (identifier) @name)) @def.field
(enum_constant name: (identifier) @name) @def.field
(record_declaration
  parameters: (formal_parameters (formal_parameter name: (identifier) @name) @def.field))

; An anonymous class body gives its methods a class: the type it instantiates.
(object_creation_expression type: (_) @name (class_body)) @scope
`;
