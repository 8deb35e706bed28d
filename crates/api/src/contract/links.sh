# shellcheck shell=sh
# outside_links DIR: prints, one a line as `NAME -> TARGET`, each symbolic link under DIR that
# leads outside it (an absolute target such as /proc/self/environ, or up past its top): celld
# deploy would read what it points to in the pod it runs in, where that reaches the pod's own
# files and credentials. Prints nothing for a DIR that does not exist. Needs find and readlink.
outside_links() {
  links_root=$(cd "$1" 2>/dev/null && pwd -P) || return 0
  find "$links_root" -type l 2>/dev/null | while IFS= read -r links_path; do
    case $(readlink -f "$links_path") in
      "$links_root"/*) ;;
      *) printf '%s -> %s\n' "${links_path#"$links_root"/}" "$(readlink "$links_path")" ;;
    esac
  done
}
