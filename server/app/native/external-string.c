// externalString(view): a string whose characters are the memory of `view` (a Uint8Array read as
// Latin-1, or a Uint16Array read as UTF-16), not a copy of it. The view is kept alive until the string
// is collected. See ../external-string.ts for why.
#define NAPI_EXPERIMENTAL
#include <node_api.h>
#include <stdbool.h>

static void release(napi_env env, void* data, void* hint) {
  (void)data;
  napi_delete_reference(env, (napi_ref)hint);
}

// Called while the string is collected, where only "basic" calls are allowed: the view's reference is
// released just after.
static void on_collected(node_api_basic_env env, void* data, void* hint) {
  node_api_post_finalizer(env, release, data, hint);
}

static napi_value external_string(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value view;
  if (napi_get_cb_info(env, info, &argc, &view, NULL, NULL) != napi_ok) return NULL;
  bool is_typed_array = false;
  napi_is_typedarray(env, view, &is_typed_array);
  napi_typedarray_type type;
  size_t length = 0;
  void* data = NULL;
  if (!is_typed_array || napi_get_typedarray_info(env, view, &type, &length, &data, NULL, NULL) != napi_ok ||
      (type != napi_uint8_array && type != napi_uint16_array)) {
    napi_throw_type_error(env, NULL, "externalString takes a Uint8Array (Latin-1) or a Uint16Array (UTF-16)");
    return NULL;
  }
  napi_ref ref;
  if (napi_create_reference(env, view, 1, &ref) != napi_ok) return NULL;
  napi_value result;
  bool copied = false;
  napi_status status = type == napi_uint8_array
      ? node_api_create_external_string_latin1(env, (char*)data, length, on_collected, ref, &result, &copied)
      : node_api_create_external_string_utf16(env, (char16_t*)data, length, on_collected, ref, &result, &copied);
  if (status != napi_ok) {
    napi_delete_reference(env, ref);
    napi_throw_error(env, NULL, "externalString: the engine refused the string");
    return NULL;
  }
  // a copy (the engine may copy a short string) needs no view
  if (copied) napi_delete_reference(env, ref);
  return result;
}

NAPI_MODULE_INIT() {
  napi_value fn;
  if (napi_create_function(env, "externalString", NAPI_AUTO_LENGTH, external_string, NULL, &fn) != napi_ok) return NULL;
  if (napi_set_named_property(env, exports, "externalString", fn) != napi_ok) return NULL;
  return exports;
}
