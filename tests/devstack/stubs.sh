# Minimal stand-ins for the devstack functions our plugin uses. Calls that
# would act on the system are recorded in $DEVSTACK_CALLS.
_INI="$PYTHON $(dirname "${BASH_SOURCE[0]}")/ini.py"

function iniget { $_INI get "$@"; }
function iniget_multiline { $_INI get_multiline "$@"; }
function iniset { $_INI set "$@"; }
function iniset_multiline { $_INI set_multiline "$@"; }
function iniadd { $_INI add "$@"; }
function inidelete { $_INI delete "$@"; }
function trueorfalse {
    local default=$1 value=${!2:-}
    case "${value,,}" in
        1|yes|true|on) echo True ;;
        0|no|false|off) echo False ;;
        *) echo $default ;;
    esac
}
function define_plugin { echo "define_plugin $*" >> $DEVSTACK_CALLS; }
function echo_summary { :; }
function setup_develop { echo "setup_develop $*" >> $DEVSTACK_CALLS; }
function pip_uninstall { echo "pip_uninstall $*" >> $DEVSTACK_CALLS; }
function openstack {
    echo "openstack $*" >> $DEVSTACK_CALLS
    # 'aggregate show' of a missing aggregate fails, like the real client
    [[ "$*" != *"aggregate show"* ]]
}
