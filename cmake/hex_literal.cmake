# hex_literal(FILE OUT_VAR SIZE_VAR): the bytes of FILE as the body of a C++
# string literal, each byte a \xNN escape (so any content is safe), 32
# bytes a line; SIZE_VAR gets the byte count. Shared by the embed scripts.
function(hex_literal file out_var size_var)
  file(READ "${file}" hex HEX)
  string(LENGTH "${hex}" hex_length)
  math(EXPR size "${hex_length} / 2")
  string(REPEAT "[0-9a-f]" 64 line_pattern)
  string(REGEX REPLACE "(${line_pattern})" "\\1\n" lines "${hex}")
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "\\\\x\\1" escaped "${lines}")
  string(REGEX REPLACE "\n$" "" escaped "${escaped}")
  string(REPLACE "\n" "\"\n    \"" escaped "${escaped}")
  set(${out_var} "${escaped}" PARENT_SCOPE)
  set(${size_var} "${size}" PARENT_SCOPE)
endfunction()
