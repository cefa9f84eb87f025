; JavaScript's own definitions, after js-common.scm (captures: _extract.py).
(class_declaration name: (identifier) @name) @def.class
(variable_declaration
  (variable_declarator name: (identifier) @name value: [(arrow_function) (function_expression)])) @def.function
